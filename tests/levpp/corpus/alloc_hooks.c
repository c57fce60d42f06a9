/* alloc_hooks.c - allocator hooks in a struct, as cJSON keeps them:
 * { malloc, free, realloc } called through the members, the type taken
 * from the cast at each call; the table travels with every image. Also
 * a wrapper reached through a function pointer, as miniz's zalloc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define internal_malloc malloc
#define internal_free free
#define internal_realloc realloc

typedef struct item {
    struct item *next, *child;
    char *name;
    int kind;
} item;

static struct hooks {
    void *(*allocate)(size_t);
    void (*deallocate)(void *);
    void *(*reallocate)(void *, size_t);
} global_hooks = {internal_malloc, internal_free, internal_realloc};

typedef void *(*alloc_fn)(void *opaque, size_t items, size_t size);

static void *def_alloc(void *opaque, size_t items, size_t size)
{
    (void)opaque;
    return calloc(items, size);
}

struct stream {
    alloc_fn zalloc;
    void *opaque;
};

static char *dup_name(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = (char *)global_hooks.allocate(n);
    memcpy(d, s, n);
    return d;
}

static item *new_item(int kind, const char *name)
{
    item *it = (item *)global_hooks.allocate(sizeof(item));
    memset(it, 0, sizeof(item));
    it->kind = kind;
    it->name = dup_name(name);
    return it;
}

/* a checkpointable function calling the hooks through a parameter */
static item **collect(const struct hooks *h, item *root, size_t *count)
{
    item **all = NULL;
    size_t n = 0;
    for (item *p = root->child; p; p = p->next) {
        all = (item **)h->reallocate(all, (n + 1) * sizeof(item *));
        all[n++] = p;
    }
    *count = n;
    return all;
}

int main(void)
{
    struct stream st = {def_alloc, NULL};
    item *root = new_item(0, "root");
    for (int i = 0; i < 500; i++) {
        char name[32];
        snprintf(name, sizeof name, "item%d", i);
        item *it = new_item(i % 7, name);
        it->next = root->child;
        root->child = it;
        if (i % 3 == 0) {
            it->child = (item *)st.zalloc(st.opaque, 1, sizeof(item));
            it->child->kind = -i;
        }
    }
    /* a growing array of pointers through the realloc hook */
    size_t n = 0;
    item **all = collect(&global_hooks, root, &n);
    long sum = 0;
    size_t chars = 0;
    for (size_t i = 0; i < n; i++) {
        sum += all[i]->kind + (all[i]->child ? all[i]->child->kind : 0);
        chars += strlen(all[i]->name);
    }
    printf("%zu items, sum %ld, %zu chars, first %s\n", n, sum, chars, all[0]->name);
    for (size_t i = 0; i < n; i++) {
        global_hooks.deallocate(all[i]->name);
        global_hooks.deallocate(all[i]->child);
        global_hooks.deallocate(all[i]);
    }
    global_hooks.deallocate(all);
    global_hooks.deallocate(root->name);
    global_hooks.deallocate(root);
    return 0;
}
