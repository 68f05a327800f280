package registry

import (
	"errors"
	"fmt"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/protocol/queryf"
)

// The "tars" scheme: "tars://tars.tarsregistry.QueryObj@tcp -h 10.0.0.1 -p 17890" is the TARS
// registry reached through that proxy string (the Communicator's locator key is its short form),
// refreshed every env.Refresh, with env.EndpointCache.
func init() {
	naming.Register("tars", func(t naming.Target, env naming.Env) (naming.Source, error) {
		pt, err := endpoint.Parse(t.Rest)
		if err != nil {
			return nil, err
		}
		if len(pt.Endpoints) == 0 {
			return nil, fmt.Errorf(`the registry's proxy string must have endpoints, "tars.tarsregistry.QueryObj@tcp -h host -p port"`)
		}
		if env.StringToProxy == nil {
			return nil, errors.New("the tars scheme is built by a Communicator (it needs its StringToProxy)")
		}
		q := new(queryf.QueryFProxy)
		if err := env.StringToProxy(t.Rest, q); err != nil {
			return nil, err
		}
		return New(q, Options{Refresh: env.Refresh, Cache: env.EndpointCache, Locator: t.Rest, Log: env.Log}), nil
	})
}
