/* The HTTP child's door (monitor/http.h has the core's side). */
#ifndef FB_HTTP_MAIN_H
#define FB_HTTP_MAIN_H

struct config;

/* The child's main (http-child.c): this binary run as `firebreakd --http-child ARGS`, logging to
 * stderr (foreground) or syslog as the core does. */
int http_child_main(const struct config *cfg, int foreground);

#endif
