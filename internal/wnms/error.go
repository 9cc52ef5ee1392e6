// Package wnms holds the domain of the wireless network management server:
// its resources, the error codes every layer speaks, and the service
// interfaces that the HTTP layer calls and the store implements.
package wnms

import (
	"errors"
	"fmt"
)

// Error codes of api.md §3. Each maps to exactly one HTTP status
// (httpkit.Status).
const (
	InvalidRequestBody    = "INVALID_REQUEST_BODY"
	InvalidParameter      = "INVALID_PARAMETER"
	MissingParameter      = "MISSING_PARAMETER"
	ValidationFailed      = "VALIDATION_FAILED"
	PageSizeExceeded      = "PAGE_SIZE_EXCEEDED"
	SelectiveFetch        = "SELECTIVE_FETCH_OR_UPDATE_NOT_SUPPORTED_FOR_FIELD"
	NotSupportedInCluster = "NOT_SUPPORTED_IN_CLUSTER"
	InvalidFilter         = "INVALID_FILTER"
	UnsupportedAuthType   = "UNSUPPORTED_AUTHENTICATION_TYPE"
	InvalidCredentials    = "INVALID_CREDENTIALS"
	SessionRequired       = "SESSION_REQUIRED"
	SessionExpired        = "SESSION_EXPIRED"
	AccessDenied          = "ACCESS_DENIED"
	LocationAccessDenied  = "LOCATION_ACCESS_DENIED"
	ResourceNotFound      = "RESOURCE_NOT_FOUND"
	MethodNotAllowed      = "METHOD_NOT_ALLOWED"
	DuplicateEntity       = "DUPLICATE_ENTITY"
	Conflict              = "CONFLICT"
	PayloadTooLarge       = "PAYLOAD_TOO_LARGE"
	UnsupportedMediaType  = "UNSUPPORTED_MEDIA_TYPE"
	RateLimited           = "RATE_LIMITED"
	InternalError         = "INTERNAL_ERROR"
	ChildUnreachable      = "CHILD_UNREACHABLE"
	ChildTimeout          = "CHILD_TIMEOUT"
)

// Error is an error a client may see: a code of api.md §3, a message
// safe to show, and moreInfo (the parameter name for parameter errors).
// Any error that is not an *Error is internal and shown only as
// INTERNAL_ERROR.
type Error struct {
	Code     string
	Message  string
	MoreInfo string
	// RetryAfter is the whole seconds a RATE_LIMITED client should wait
	// (the Retry-After header); 0 leaves the listener's default.
	RetryAfter int
}

func (e *Error) Error() string {
	if e.MoreInfo != "" {
		return e.Code + ": " + e.Message + " (" + e.MoreInfo + ")"
	}
	return e.Code + ": " + e.Message
}

// Errorf makes an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ParamError is an INVALID_PARAMETER error naming the parameter in moreInfo.
func ParamError(param, format string, args ...any) *Error {
	return &Error{Code: InvalidParameter, Message: fmt.Sprintf(format, args...), MoreInfo: param}
}

// MissingParam is a MISSING_PARAMETER error naming the parameter.
func MissingParam(param string) *Error {
	return &Error{Code: MissingParameter, Message: "parameter " + param + " is required", MoreInfo: param}
}

// Invalid is a VALIDATION_FAILED error; the message names the field and rule.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Code: ValidationFailed, Message: field + ": " + fmt.Sprintf(format, args...), MoreInfo: field}
}

// RuleBroken is a VALIDATION_FAILED error that does not yet know which
// field of the request broke the rule: the store says what is wrong ("no
// location 7"), and the call that knows its request names the field with
// AtField.
func RuleBroken(format string, args ...any) *Error {
	return Errorf(ValidationFailed, format, args...)
}

// AtField names field in a VALIDATION_FAILED error that names none yet
// (RuleBroken); any other error is returned as it is.
func AtField(err error, field string) error {
	var e *Error
	if !errors.As(err, &e) || e.Code != ValidationFailed || e.MoreInfo != "" {
		return err
	}
	return &Error{Code: ValidationFailed, Message: field + ": " + e.Message, MoreInfo: field}
}

// NotFound is a RESOURCE_NOT_FOUND error.
func NotFound(format string, args ...any) *Error {
	return Errorf(ResourceNotFound, format, args...)
}

// ErrorCode returns the code of err if it is (or wraps) an *Error, else
// INTERNAL_ERROR.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return InternalError
}
