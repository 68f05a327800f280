package communicator

import (
	"errors"
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
	// The core naming schemes register themselves (naming.Register) in their init: importing
	// them here makes "tars", "file", "dns" and "dns+srv" always available to the naming key.
	// naming itself imports none of its sources; etcd registers when its module is imported.
	_ "github.com/tarscomm/tarscomm/naming/dns"
	_ "github.com/tarscomm/tarscomm/naming/file"
	_ "github.com/tarscomm/tarscomm/naming/registry"
)

// namingTarget returns the configuration's naming source as a naming address, and the key that
// gave it: naming as is, locator as "tars://<locator>", naming-file as "file://<path>"; "" for
// none.
func (c *Communicator) namingTarget() (target, key string) {
	switch n := c.cfg.Naming; {
	case n.Source != "":
		return n.Source, "naming"
	case n.NamingFile != "":
		return "file://" + n.NamingFile, "naming-file"
	case n.Locator != "":
		return "tars://" + n.Locator, "locator"
	}
	return "", ""
}

// startNaming sets up the source of proxy strings without '@': src if given, else the source the
// configuration names, built by its scheme's naming.Builder and owned (closed) by c.
func (c *Communicator) startNaming(src naming.Source) error {
	if src != nil {
		c.naming, c.namingWhere = src, "the naming source given to WithNaming"
		return nil
	}
	target, key := c.namingTarget()
	if target == "" {
		return nil
	}
	src, err := naming.Build(target, naming.Env{
		Log:           c.log,
		Refresh:       c.cfg.RefreshEndpointInterval,
		EndpointCache: c.cfg.EndpointCache,
		StringToProxy: c.StringToProxy,
	})
	written := map[string]string{"naming": target, "naming-file": c.cfg.Naming.NamingFile, "locator": c.cfg.Naming.Locator}[key]
	if err != nil {
		return fmt.Errorf("communicator: %s = %q: %w", key, written, err) // the key as the file writes it
	}
	c.naming, c.ownNaming = src, func() { _ = naming.Close(src) }
	c.namingWhere = fmt.Sprintf("%s %q", key, written) // as the configuration writes it
	return nil
}

// noEndpoint is the error of a call to object (in set, if not "") whose naming source lists no
// endpoint to call: it says where the list came from, and what to look at.
func (c *Communicator) noEndpoint(object, set string) error {
	in := ""
	if set != "" {
		in = " in set " + set
	}
	return fmt.Errorf("%w: %s lists no active endpoint of %s%s (none under that name, or every one inactive); the list is asked for again",
		ErrNoEndpoint, c.namingWhere, object, in)
}

// callable returns eps without the endpoints a client cannot call (endpoint.CallProblem: port 0,
// udp with -e 1), each left out with a warning: a naming source may hold them (a naming file, an
// etcd value), and a proxy string holding one is refused (proxy). eps itself is returned, not a
// copy, when every endpoint is callable.
func (c *Communicator) callable(object string, eps []endpoint.Endpoint) []endpoint.Endpoint {
	for i, ep := range eps {
		if ep.CallProblem() == "" {
			continue
		}
		out := slices.Clone(eps[:i])
		for _, ep := range eps[i:] {
			if p := ep.CallProblem(); p != "" {
				c.log.Warn("naming: endpoint left out", zap.String("servant", object), zap.String("endpoint", ep.String()), zap.Error(errors.New(p)))
				continue
			}
			out = append(out, ep)
		}
		return out
	}
	return eps
}

// closeNaming stops every servant's watch, then the Communicator's own source, once: a
// concurrent Close waits here until the first has stopped them.
func (c *Communicator) closeNaming() {
	c.namingOnce.Do(func() {
		c.mu.Lock()
		ms := c.managers
		c.managers = nil
		c.mu.Unlock()
		for _, m := range ms {
			m.Close()
		}
		if c.ownNaming != nil {
			c.ownNaming()
		}
	})
}

// noNaming is the error of a bare object when the Communicator has no naming source.
func (c *Communicator) noNaming(obj string) error {
	return fmt.Errorf(`%w: %s has no endpoints in its proxy string and no naming source is configured: `+
		`set the "locator" key (the registry's "tars.tarsregistry.QueryObj@tcp -h host -p port"), or `+
		`"naming" (e.g. "dns://host:port", "file:///path", "etcd://host:2379/prefix"; registered schemes: %v), or "naming-file", `+
		`or write the endpoints ("%s@tcp -h host -p port")`, ErrNoEndpoint, obj, naming.Schemes(), obj)
}
