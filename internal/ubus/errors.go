package ubus

import (
	"errors"
	"fmt"
	"strconv"
)

// The kinds of failure a caller tells apart with errors.Is. Every error the
// package returns is an *Error whose Kind is one of these.
var (
	// ErrAccessDenied: rpcd refused the call (JSON-RPC error -32002, or
	// ubus status 6), after one new login. The session's ACL does not
	// grant the object and method.
	ErrAccessDenied = errors.New("access denied")
	// ErrLoginFailed: session login was refused (wrong username or
	// password: rpcd answers ubus status 6 to the login itself).
	ErrLoginFailed = errors.New("login failed")
	// ErrNotFound: the object does not exist (JSON-RPC error -32000, as
	// for hostapd.<if> after a reboot renamed the interfaces), the method
	// does not (ubus status 3) or the thing asked about does not (ubus
	// status 4, as iwinfo answers for an unknown device).
	ErrNotFound = errors.New("not found")
	// ErrTimeout: the call did not finish in time, whether uhttpd gave up
	// on ubus (JSON-RPC error -32003, ubus status 7) or the context's
	// deadline came first (then the error also matches
	// context.DeadlineExceeded).
	ErrTimeout = errors.New("timed out")
	// ErrInvalidArgument: the AP refused the arguments (JSON-RPC error
	// -32602, ubus status 2).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrBadReply: the reply is not what rpcd sends: not JSON-RPC 2.0,
	// an id that is not the request's, a result of the wrong shape, over
	// MaxReplyBytes, a JSON-RPC protocol error (-32700, -32600, -32601,
	// -32603) or a ubus status without a kind of its own.
	ErrBadReply = errors.New("bad reply")
	// ErrHTTPStatus: the server answered with an HTTP status other than
	// 200 (uhttpd answers every JSON-RPC request with 200).
	ErrHTTPStatus = errors.New("unexpected HTTP status")
	// ErrCanceled: the caller's context was canceled (the error also
	// matches context.Canceled).
	ErrCanceled = errors.New("canceled")
	// ErrUnreachable: no HTTP exchange took place (connection refused,
	// reset, DNS, TLS).
	ErrUnreachable = errors.New("unreachable")
)

// Error is a failed exchange with an AP. Kind is one of the Err values
// above; Code is the JSON-RPC error code or the ubus status when the AP
// gave one, HTTPStatus the HTTP status when it is not 200.
type Error struct {
	Op         string // "call hostapd.phy0-ap0 get_clients", "login", "subscribe hostapd.phy0-ap0"
	Kind       error
	Code       int
	Message    string
	HTTPStatus int
	Err        error // the underlying error, if any
}

func (e *Error) Error() string {
	s := "ubus: " + e.Op + ": " + e.Kind.Error()
	if e.HTTPStatus != 0 {
		s += " " + strconv.Itoa(e.HTTPStatus)
	}
	if e.Code != 0 {
		s += fmt.Sprintf(" (%d %s)", e.Code, e.Message)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap gives both the kind and the underlying error to errors.Is and
// errors.As.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// The JSON-RPC error codes of uhttpd-mod-ubus (uhttpd ubus.c, json_errors).
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
	rpcInternalError  = -32603
	rpcObjectNotFound = -32000
	rpcSessionMissing = -32001
	rpcAccessDenied   = -32002
	rpcTimeout        = -32003
)

// The ubus status codes (libubus ubusmsg.h, enum ubus_msg_status) that
// have a kind of their own.
const (
	statusOK              = 0
	statusInvalidArgument = 2
	statusMethodNotFound  = 3
	statusNotFound        = 4
	statusPermission      = 6
	statusTimeout         = 7
)

// rpcKind is the kind of a JSON-RPC error code.
func rpcKind(code int) error {
	switch code {
	case rpcAccessDenied, rpcSessionMissing:
		return ErrAccessDenied
	case rpcObjectNotFound:
		return ErrNotFound
	case rpcTimeout:
		return ErrTimeout
	case rpcInvalidParams:
		return ErrInvalidArgument
	}
	return ErrBadReply
}

// statusKind is the kind of a nonzero ubus status.
func statusKind(status int) error {
	switch status {
	case statusPermission:
		return ErrAccessDenied
	case statusNotFound, statusMethodNotFound:
		return ErrNotFound
	case statusTimeout:
		return ErrTimeout
	case statusInvalidArgument:
		return ErrInvalidArgument
	}
	return ErrBadReply
}

// statusText is ubus_strerror's text for a status (libubus.c).
func statusText(status int) string {
	texts := [...]string{"Success", "Invalid command", "Invalid argument",
		"Method not found", "Not found", "No response", "Permission denied",
		"Request timed out", "Operation not supported", "Unknown error",
		"Connection failed", "Out of memory", "Parsing message data failed",
		"System error"}
	if status >= 0 && status < len(texts) {
		return texts[status]
	}
	return "Unknown error"
}
