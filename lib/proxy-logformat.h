/*
 * The line the gate's L7 proxy (squid) writes per transaction, and the monitor reads
 * (collectors/http/): one TAB between fields, "-" for an absent value. The fields squid sets come
 * first; those the sandbox can choose come last, each in squid's "[" encoding (so no field holds
 * a TAB or a newline). Fields, in order:
 *   1 time (s.ms)        2 client address     3 client port       4 port asked for
 *   5 status to client   6 status upstream    7 bytes from client 8 bytes to client
 *   9 body bytes upstream 10 duration (ms)    11 squid's error    12 upstream address
 *  13 the proxy's notes (firebreak=rule:ID, refused:ID, nohost, nosni, decoy:marker,
 *     credential:NAME)
 *  14 scheme  15 method  16 host  17 TLS SNI  18 path
 */
#ifndef FB_PROXY_LOGFORMAT_H
#define FB_PROXY_LOGFORMAT_H

#define FIREBREAK_PROXY_LOGFORMAT                                                                  \
	"%ts.%03tu\t%>a\t%>p\t%>rP\t%>Hs\t%<Hs\t%>st\t%<st\t%<bs\t%tr\t%err_code\t%<a"             \
	"\t%[{firebreak}note\t%[>rs\t%[rm\t%[>rd\t%[ssl::>sni\t%[>rp"
#define FIREBREAK_PROXY_LOGFORMAT_FIELDS 18

#endif
