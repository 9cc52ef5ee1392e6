package telemetry

// FailureText is the catalogue's name of a connection failure's cause
// (subFailureCode), or of its category when the cause is not in the
// catalogue, "" when neither is.
func FailureText(code, sub int) string {
	failure, subFailure, ok := failureNames(code, sub)
	if ok && subFailure != "" {
		return subFailure
	}
	return failure
}
