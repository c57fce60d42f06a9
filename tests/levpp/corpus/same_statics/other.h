/* other.h - the second input of same_statics. */
void other_push(long v);
long other_sum(void);
int other_depth(void);
