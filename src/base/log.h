/* log.h - diagnostics on stderr: "skillbox: message". */
#ifndef LOG_H
#define LOG_H

#include "base/base.h"

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Messages above this level are dropped. Default LOG_WARN. */
void	log_set_level(enum log_level l);
enum log_level log_get_level(void);
/* Program name for the prefix ("skillbox"). */
void	log_set_prog(const char *prog);

void	log_msg(enum log_level l, const char *fmt, ...) ATTR_PRINTF(2, 3);

#define log_err(...)	log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#ifdef DEBUG
#define log_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)
#else
#define log_debug(...)	((void)0)
#endif

#endif
