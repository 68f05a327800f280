package etcd

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tarscomm/tarscomm/naming"
)

// The "etcd" scheme, registered when this package is imported: the Communicator's naming key
//
//	naming = "etcd://10.0.0.1:2379,10.0.0.2:2379/tars?debounce=100ms"
//
// is a Source over a client of those etcd members (plain http, no authentication) reading the
// keys under the path ("/tars" when there is none). The Communicator owns that client and closes
// it at Close. For TLS or authentication, build the client in code and pass
// communicator.WithNaming(etcd.New(cli, prefix)).
func init() {
	naming.Register("etcd", func(t naming.Target, env naming.Env) (naming.Source, error) {
		endpoints, prefix, opts, err := parseTarget(t.Rest)
		if err != nil {
			return nil, err
		}
		cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, Logger: env.Log.Named("etcd-client")})
		if err != nil {
			return nil, err
		}
		opts = append(opts, WithLogger(env.Log.Named("etcd-naming")))
		return &ownedSource{Source: New(cli, prefix, opts...), cli: cli}, nil
	})
}

// parseTarget reads "host:port[,host:port...][/prefix][?debounce=d]".
func parseTarget(rest string) (endpoints []string, prefix string, opts []Option, err error) {
	hosts, path, _ := strings.Cut(rest, "/")
	path, query, _ := strings.Cut(path, "?")
	if strings.Contains(hosts, "?") {
		hosts, query, _ = strings.Cut(hosts, "?")
	}
	for h := range strings.SplitSeq(hosts, ",") {
		if h == "" {
			return nil, "", nil, fmt.Errorf(`%q: want "etcd://host:port[,host:port...]/prefix"`, rest)
		}
		endpoints = append(endpoints, h)
	}
	prefix = "/" + strings.TrimSuffix(path, "/")
	if prefix == "/" {
		prefix = "/tars"
	}
	vals, err := url.ParseQuery(query)
	if err != nil {
		return nil, "", nil, err
	}
	for k, v := range vals {
		switch k {
		case "debounce":
			d, err := time.ParseDuration(v[len(v)-1])
			if err != nil || d < 0 {
				return nil, "", nil, fmt.Errorf("debounce=%q: not a duration", v[len(v)-1])
			}
			opts = append(opts, WithDebounce(d))
		default:
			return nil, "", nil, errors.New("unknown option " + k + " (known: debounce)")
		}
	}
	return endpoints, prefix, opts, nil
}

// ownedSource is a Source built from a naming address: it owns its client.
type ownedSource struct {
	*Source
	cli *clientv3.Client
}

// Close closes the client.
func (s *ownedSource) Close() error { return s.cli.Close() }
