package ubus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// MaxReplyBytes caps every reply body the client reads: a longer reply is
// refused (ErrBadReply) after reading MaxReplyBytes+1 bytes, so memory
// does not grow with what an AP sends. The largest real replies (iwinfo
// scan, get_clients of a busy radio) are tens of KiB.
const MaxReplyBytes = 4 << 20

// errTooLarge is the underlying error of a reply over MaxReplyBytes.
var errTooLarge = fmt.Errorf("reply over %d bytes", MaxReplyBytes)

// readCapped reads r to its end or to max+1 bytes, whichever comes first;
// more than max bytes is errTooLarge.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, errTooLarge
	}
	return b, nil
}

// response is uhttpd's answer to one JSON-RPC request on POST /ubus
// (uhttpd ubus.c, uh_ubus_request_cb and uh_ubus_json_rpc_error):
//
//	{"jsonrpc":"2.0","id":1,"result":[0,{...}]}       call, with data
//	{"jsonrpc":"2.0","id":1,"result":[6]}             call, ubus status 6
//	{"jsonrpc":"2.0","id":1,"result":{"hostapd.x":{...}}}   list
//	{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Access denied"}}
//
// The "legacy" endpoint POST /ubus always puts a call's ubus status first
// in a result array, even for errors; only failures before ubus is asked
// (object lookup, ACL, parameters, uhttpd's own timeout) are JSON-RPC
// errors.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    *int   `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// decodeResult checks the envelope of a reply to request id and gives its
// result, or the *Error the reply stands for.
func decodeResult(op string, body []byte, id uint64) (json.RawMessage, error) {
	bad := func(format string, args ...any) error {
		return &Error{Op: op, Kind: ErrBadReply, Err: fmt.Errorf(format, args...)}
	}
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, bad("not JSON-RPC: %v", err)
	}
	if r.JSONRPC != "2.0" {
		return nil, bad("jsonrpc %q, not 2.0", r.JSONRPC)
	}
	var got uint64
	if err := json.Unmarshal(r.ID, &got); err != nil || got != id {
		return nil, bad("id %s, not %d", truncate(r.ID), id)
	}
	hasResult := len(r.Result) > 0 && !bytes.Equal(r.Result, []byte("null"))
	switch {
	case r.Error != nil && hasResult:
		return nil, bad("both result and error")
	case r.Error != nil:
		if r.Error.Code == nil {
			return nil, bad("error without a code")
		}
		return nil, &Error{Op: op, Kind: rpcKind(*r.Error.Code), Code: *r.Error.Code, Message: r.Error.Message}
	case !hasResult:
		return nil, bad("neither result nor error")
	}
	return r.Result, nil
}

// decodeCall decodes the reply to a call: the result is [status] or
// [status, data]; data, when there is some, decodes into out (if not nil).
// A call that succeeds without data leaves out as it was.
func decodeCall(op string, body []byte, id uint64, out any) error {
	result, err := decodeResult(op, body, id)
	if err != nil {
		return err
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(result, &parts); err != nil || len(parts) < 1 || len(parts) > 2 {
		return &Error{Op: op, Kind: ErrBadReply, Err: fmt.Errorf("result %s is not [status, data]", truncate(result))}
	}
	var status int
	if err := json.Unmarshal(parts[0], &status); err != nil {
		return &Error{Op: op, Kind: ErrBadReply, Err: fmt.Errorf("status %s is not an integer", truncate(parts[0]))}
	}
	if status != statusOK {
		return &Error{Op: op, Kind: statusKind(status), Code: status, Message: statusText(status)}
	}
	if len(parts) == 1 || out == nil {
		return nil
	}
	if d := bytes.TrimSpace(parts[1]); len(d) == 0 || d[0] != '{' {
		// ubus data is always a table (blobmsg), never a bare value.
		return &Error{Op: op, Kind: ErrBadReply, Err: fmt.Errorf("data %s is not an object", truncate(parts[1]))}
	}
	if err := json.Unmarshal(parts[1], out); err != nil {
		return &Error{Op: op, Kind: ErrBadReply, Err: err}
	}
	return nil
}

// decodeList decodes the reply to list with patterns: an object from
// object path to its methods, each with its arguments and their types
// (uhttpd ubus.c, uh_ubus_send_list and uh_ubus_list_cb).
func decodeList(op string, body []byte, id uint64) (map[string]map[string]map[string]string, error) {
	result, err := decodeResult(op, body, id)
	if err != nil {
		return nil, err
	}
	var objects map[string]map[string]map[string]string
	if err := json.Unmarshal(result, &objects); err != nil || objects == nil {
		return nil, &Error{Op: op, Kind: ErrBadReply, Err: fmt.Errorf("result %s is not a list of objects", truncate(result))}
	}
	return objects, nil
}

// refusal is the body uhttpd sends, with status 200 and Content-Type
// application/json, when it refuses a subscription (uhttpd ubus.c,
// uh_ubus_handle_get_subscribe): {"code":-13,"message":"Permission
// denied"} (-EACCES) when the session may not subscribe, or a ubus status
// such as {"code":4,"message":"Not found"} when the object is missing.
type refusal struct {
	Code    *int   `json:"code"`
	Message string `json:"message"`
}

// errEACCES is -EACCES as uhttpd sends it for a denied subscription.
const errEACCES = -13

func decodeRefusal(op string, body []byte) error {
	var r refusal
	if err := json.Unmarshal(body, &r); err != nil || r.Code == nil {
		return &Error{Op: op, Kind: ErrBadReply, Err: fmt.Errorf("not an event stream nor a refusal: %s", truncate(body))}
	}
	kind := statusKind(*r.Code)
	if *r.Code == errEACCES {
		kind = ErrAccessDenied
	}
	if *r.Code == statusOK {
		kind = ErrBadReply
	}
	return &Error{Op: op, Kind: kind, Code: *r.Code, Message: r.Message}
}

// truncate gives at most 64 bytes of b, for error messages.
func truncate(b []byte) string {
	if len(b) > 64 {
		return strconv.Quote(string(b[:64])) + "..."
	}
	return strconv.Quote(string(b))
}

// isTooLarge reports whether err is a reply over the cap.
func isTooLarge(err error) bool { return errors.Is(err, errTooLarge) }
