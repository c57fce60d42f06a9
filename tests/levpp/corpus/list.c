/* list.c - a singly linked list on the heap: sorted insertion, reversal,
 * removal, an array of node pointers grown with realloc, and free.
 * Exit status: the length of the list at the end (6). */
#include <stdio.h>
#include <stdlib.h>

struct node {
    int value;
    struct node *next;
};

static struct node *push_sorted(struct node *head, int value)
{
    struct node *n = malloc(sizeof *n);
    if (!n)
        return head;
    n->value = value;
    struct node **link = &head;
    while (*link && (*link)->value < value)
        link = &(*link)->next;
    n->next = *link;
    *link = n;
    return head;
}

static struct node *reverse(struct node *head)
{
    struct node *prev = NULL;
    while (head) {
        struct node *next = head->next;
        head->next = prev;
        prev = head;
        head = next;
    }
    return prev;
}

/* Removes every node whose value is a multiple of k. */
static struct node *remove_multiples(struct node *head, int k, int *removed)
{
    struct node **link = &head;
    while (*link) {
        struct node *n = *link;
        if (n->value % k == 0) {
            *link = n->next;
            free(n);
            (*removed)++;
            continue;
        }
        link = &n->next;
    }
    return head;
}

static int length(const struct node *n)
{
    int len = 0;
    for (; n; n = n->next)
        len++;
    return len;
}

static void print_list(const char *label, const struct node *n)
{
    printf("%s:", label);
    for (; n; n = n->next)
        printf(" %d", n->value);
    printf("\n");
}

/* Collects the nodes into an array grown by realloc; caller frees it. */
static struct node **to_array(struct node *head, int *count)
{
    struct node **arr = NULL;
    int cap = 0;
    *count = 0;
    for (struct node *n = head; n; n = n->next) {
        if (*count == cap) {
            cap = cap ? cap * 2 : 1;
            struct node **bigger = realloc(arr, cap * sizeof *arr);
            if (!bigger) {
                free(arr);
                return NULL;
            }
            arr = bigger;
        }
        arr[(*count)++] = n;
    }
    return arr;
}

static void free_list(struct node *n)
{
    while (n) {
        struct node *next = n->next;
        free(n);
        n = next;
    }
}

int main(void)
{
    struct node *head = NULL;
    unsigned seed = 12345;
    for (int i = 0; i < 15; i++) {
        seed = seed * 1103515245u + 12345u;
        head = push_sorted(head, (int)(seed >> 16) % 100);
    }
    print_list("sorted", head);
    head = reverse(head);
    print_list("reversed", head);
    int removed = 0;
    head = remove_multiples(head, 3, &removed);
    head = remove_multiples(head, 4, &removed);
    print_list("no multiples of 3 or 4", head);
    printf("removed %d\n", removed);

    int count = 0;
    struct node **arr = to_array(head, &count);
    if (!arr)
        return 100;
    int sum = 0;
    for (int i = 0; i < count; i++)
        sum += arr[i]->value * (i + 1);
    printf("array of %d nodes, weighted sum %d, last %d\n", count, sum, arr[count - 1]->value);
    free(arr);

    int len = length(head);
    free_list(head);
    return len;
}
