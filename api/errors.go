package api

// Protocol-level errors returned by a Handler's Call (see api/rpc): the
// method does not exist, or its params do not decode. A failed action is not
// one of these; it is a Result with IsError.
var (
	ErrMethodNotFound = errorString("method not found")
	ErrInvalidParams  = errorString("invalid params")
)

type errorString string

func (e errorString) Error() string { return string(e) }
