package main

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/service"
)

var stubOnce = sync.OnceValue(func() bool {
	// Params of the wrong type: a real service refuses them before
	// launching anything; the stub does not know the method.
	_, err := service.New(nil).Call(context.Background(), "open", json.RawMessage(`{"url":5}`))
	return errors.Is(err, api.ErrMethodNotFound)
})

// serviceIsStub reports whether api/service is still the stub that knows
// no method; the browser tests skip then.
func serviceIsStub() bool { return stubOnce() }
