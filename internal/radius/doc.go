// Package radius makes wnms a RADIUS listener (decisions §21): an
// authentication proxy in front of a site's RADIUS servers (RFC 2865,
// RFC 3579) and an accounting server (RFC 2866), which turn what they
// observe into client events and samples in the ingest format for a
// Sink. It never decides an authentication itself.
//
// # Wiring
//
// One Settings holds the configuration both listeners read at each
// packet; PUT /V5/datasources calls Set, which validates and swaps it
// whole. The caller opens the UDP sockets (--radius-auth-listen,
// --radius-acct-listen) and implements Sink over the ingest write path:
//
//	settings, err := radius.NewSettings(cfg) // errors name no secret
//	proxy := radius.NewProxy(settings, sink, radius.ProxyOptions{Logger: log})
//	go proxy.Serve(ctx, authConn)
//	acct := radius.NewAccounting(settings, sink, radius.AccountingOptions{Logger: log})
//	go acct.Serve(ctx, acctConn)
//	...
//	err = settings.Set(newCfg) // on PUT; the old one stays on error
//	err = settings.SetGroups(m) // one configuration a customer, each in force on its own
//	proxy.Counters()           // and acct.Counters(), for /metrics
//	radius.DropReasons()       // the drop reasons, to show zeros too
//
// # Library
//
// The packet codec is layeh.com/radius (github.com/layeh/radius,
// MPL-2.0: file-level copyleft, so using it unmodified as a module puts
// no terms on wnms's own files; pinned at
// v0.0.0-20231213012653-1006025d24f8, its newest commit of December 2023:
// the project tags no versions). It is the Go RADIUS library most used and
// read, with generated typed attributes for every RFC dictionary, and a
// small codec that checks packet and attribute lengths (at most 4096
// octets) without panicking. Read before choosing, and why only its
// codec is used:
//
//   - Message-Authenticator (RFC 3579) is not handled by the codec at all
//     (layeh/radius issue #145: the client accepts answers without
//     verifying it), so this package computes and verifies it: HMAC-MD5
//     over the packet with an Access-Request's own authenticator, an
//     Accounting-Request's zeroed one (RFC 5080), and for responses the
//     Request Authenticator of the request answered, before the Response
//     Authenticator is computed; it puts it first in what it sends, and
//     requires it on every Access-Request unless the source says its NAS
//     cannot sign (against BlastRADIUS, CVE-2024-3596), and always beside
//     EAP-Message.
//   - Its PacketServer takes the secret from a SecretSource given the
//     source address, but logs every unknown source and bad packet with
//     the standard logger, counts nothing, and suppresses duplicates only
//     while a request is in flight and by identifier alone. wnms needs a
//     secret per source CIDR, silent counted drops, and answers cached for
//     retransmissions, so it reads its sockets itself.
//   - Proxy-State is an ordinary attribute there; this package appends
//     its own on the way up, keeps the NAS's, and strips its own on the
//     way down. Salt-encrypted attributes (User-Password, Tunnel-Password,
//     MS-MPPE-Send/Recv-Key) are re-encrypted with the library's helpers
//     when a packet changes secret and authenticator.
//
// The alternatives read (bronze1man/radius and its fork sergle/radius,
// vitalvas/goradius) are less used, and none verified
// Message-Authenticator on both directions either; a hand-written codec
// would repeat layeh's attribute work for no gain.
package radius
