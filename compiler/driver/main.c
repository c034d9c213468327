/* PLACEHOLDER: replaced by the real CLI. */
#include <stdio.h>
int main(void) { puts("tlc " TLC_VERSION); return 0; }
