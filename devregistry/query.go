package devregistry

import (
	"context"
	"net"
	"strings"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/registry"
	"github.com/tarscomm/tarscomm/protocol/endpointf"
	"github.com/tarscomm/tarscomm/protocol/queryf"
	"github.com/tarscomm/tarscomm/server"
)

// retBadSet answers a set id that is not "name.area.group", or a set with no endpoint.
const retBadSet = -1

// query serves QueryF from a Registry.
type query struct {
	queryf.UnimplementedQueryFServer // for functions added to QueryF later
	r                                *Registry
}

var _ queryf.QueryFServer = query{}

func (q query) FindObjectById(_ context.Context, _ *server.Current, id string) ([]endpointf.EndpointF, error) {
	return toF(q.r.Lookup(id).Active), nil
}

func (q query) FindObjectById4Any(_ context.Context, _ *server.Current, id string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	return answer(q.r.Lookup(id))
}

func (q query) FindObjectById4All(_ context.Context, _ *server.Current, id string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	return answer(q.r.Lookup(id))
}

func (q query) FindObjectByIdInSameGroup(_ context.Context, cur *server.Current, id string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	q.r.mu.Lock()
	defer q.r.mu.Unlock()
	l := q.r.lookup(id)
	if g := q.r.groupOf(hostOf(cur.RemoteAddr)); g != "" {
		if in := q.r.inGroup(l, g); len(in.Active) > 0 {
			l = in
		}
	}
	return answer(l)
}

func (q query) FindObjectByIdInSameStation(_ context.Context, _ *server.Current, id, station string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	q.r.mu.Lock()
	defer q.r.mu.Unlock()
	return answer(q.r.inGroup(q.r.lookup(id), station))
}

func (q query) FindObjectByIdInSameSet(_ context.Context, _ *server.Current, id, setID string) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	l, ok := inSet(q.r.Lookup(id), setID)
	if !ok {
		return retBadSet, nil, nil, nil
	}
	return answer(l)
}

// inGroup keeps the endpoints of l in group g. Called with r.mu held.
func (r *Registry) inGroup(l naming.List, g string) naming.List {
	return filter(l, func(ep endpoint.Endpoint) bool { return r.groupOf(ep.Host) == g })
}

// inSet keeps the endpoints of l for set id "name.area.group" by naming.SelectSet's rules (the
// TARS registry's, which every other source follows too: a set name no endpoint is deployed in
// selects every endpoint), over the active and inactive endpoints together. ok is false, to be
// answered -1 as TARS's registry answers, for a malformed id (a name or area of "*" included)
// and for a set name the object is deployed in with no endpoint in that set nor in its area's
// "*" group (DbHandle's -2, which QueryImp answers -1).
func inSet(l naming.List, id string) (naming.List, bool) {
	parts := strings.Split(id, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" || parts[0] == "*" || parts[1] == "*" {
		return naming.List{}, false
	}
	all := append(l.Active[:len(l.Active):len(l.Active)], l.Inactive...)
	sel := naming.SelectSet(all, id)
	if len(sel) == len(all) {
		return l, true
	}
	if len(sel) == 0 {
		return naming.List{}, false
	}
	keep := make(map[string]bool, len(sel))
	for _, ep := range sel {
		keep[ep.String()] = true
	}
	return filter(l, func(ep endpoint.Endpoint) bool { return keep[ep.String()] }), true
}

// filter keeps the endpoints of l that keep says to.
func filter(l naming.List, keep func(endpoint.Endpoint) bool) naming.List {
	var out naming.List
	for _, ep := range l.Active {
		if keep(ep) {
			out.Active = append(out.Active, ep)
		}
	}
	for _, ep := range l.Inactive {
		if keep(ep) {
			out.Inactive = append(out.Inactive, ep)
		}
	}
	return out
}

// answer is a list as QueryF's return code and out parameters.
func answer(l naming.List) (int32, []endpointf.EndpointF, []endpointf.EndpointF, error) {
	return 0, toF(l.Active), toF(l.Inactive), nil
}

func toF(eps []endpoint.Endpoint) []endpointf.EndpointF {
	out := make([]endpointf.EndpointF, 0, len(eps))
	for _, ep := range eps {
		out = append(out, registry.ToEndpointF(ep))
	}
	return out
}

// hostOf returns the IP of a caller's address, or "".
func hostOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	return ""
}
