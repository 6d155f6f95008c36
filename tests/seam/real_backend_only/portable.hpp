// Portable code: mentions thread_local only in this comment.
#include <vector>
