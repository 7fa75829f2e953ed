/*
 * The monitor pass's files (include/jinst/monitor.h): monitor.c the pass,
 * monitor_sites.c its table of lock sites.
 */
#ifndef JINST_INSTRUMENT_MONITOR_INTERNAL_H
#define JINST_INSTRUMENT_MONITOR_INTERNAL_H

#include "internal.h"
#include "jinst/monitor.h"

int jinst_monitor_sites_new(jinst_monitor_sites **out);
void jinst_monitor_sites_free(jinst_monitor_sites *sites); /* NULL is fine */
/* The id of the site k names, handed out (its strings copied) on the
 * first request. */
int jinst_monitor_sites_assign(jinst_monitor_sites *sites, const jinst_monitor_site_info *k, uint32_t *id);

#endif
