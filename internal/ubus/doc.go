// Package ubus is a client for an OpenWrt AP's ubus over HTTP: rpcd's
// JSON-RPC behind uhttpd-mod-ubus (POST /ubus) and uhttpd's event stream
// (GET /ubus/subscribe/<object>). The ubus poller reads radio data with
// it: hostapd.<if> get_clients and get_status, iwinfo info, assoclist and
// survey, and the association events of hostapd.<if>.
//
// # Sessions
//
// A Client logs in with session login on its first call and keeps the
// session id. rpcd drops a session after its timeout of idleness (300 s
// unless asked otherwise) and on reboot; uhttpd then answers "access
// denied" (-32002), exactly as for an object the session's ACL does not
// grant, so the Client logs in once more and repeats the call once before
// it reports ErrAccessDenied. The AP's login needs, in /usr/share/rpcd/acl.d,
// read access to the objects and methods used, and ":subscribe" on
// hostapd.* for events.
//
// # Errors
//
// Every error is an *Error whose Kind tells what happened (errors.Is):
// ErrAccessDenied, ErrLoginFailed, ErrNotFound (hostapd.<if> gone after
// a reboot or a wireless reload: list the objects again), ErrTimeout,
// ErrInvalidArgument, ErrBadReply (not what rpcd sends), ErrHTTPStatus,
// ErrCanceled, ErrUnreachable.
//
// # Bounds
//
// Memory does not grow with what an AP sends: a reply is read up to
// MaxReplyBytes, an event stream line up to MaxEventLineBytes and an event
// up to MaxEventBytes; past that the reply or stream is refused. Each HTTP
// exchange is bounded by Client.Timeout as well as by its context.
//
// Package ubustest serves the same protocol, with recorded replies of a
// real device, for tests.
package ubus
