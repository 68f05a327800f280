package endpoint

import "strconv"

// SyntaxError reports a proxy or endpoint string that does not follow the grammar. Parse and
// ParseEndpoint return it; there is nothing to retry: fix the string (usually configuration).
// Match it with errors.As.
type SyntaxError struct {
	Msg   string // what is wrong, naming the offending part, e.g. `bad port "70000"`
	Input string // the string being parsed: the endpoint, or the proxy string for errors outside one
}

// Error returns `endpoint: <Msg> in "<Input>"`.
func (e *SyntaxError) Error() string {
	return "endpoint: " + e.Msg + " in " + strconv.Quote(e.Input)
}
