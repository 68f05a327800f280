package naming

import (
	"strings"

	"github.com/tarscomm/tarscomm/endpoint"
)

// SelectSet returns the endpoints of all that a query for set gets, by the TARS registry's rules
// for findObjectByIdInSameSet, so that every source that knows its endpoints' sets (-s) selects
// as the registry does:
//
//   - set "" (set routing off), or not "name.area.group": every endpoint;
//   - no endpoint in a set of that set name: the set is not used, every endpoint;
//   - group "*": the endpoints of every group of the same name and area;
//   - otherwise the endpoints of exactly that set, or, if there are none, those of the area's
//     wildcard group "name.area.*" (possibly none).
//
// The order of all is kept. all is returned as is when every endpoint is selected.
func SelectSet(all []endpoint.Endpoint, set string) []endpoint.Endpoint {
	if set == "" {
		return all
	}
	name, rest, ok1 := strings.Cut(set, ".")
	area, group, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.Contains(group, ".") {
		return all
	}
	inName := false
	var out, wild []endpoint.Endpoint
	for _, ep := range all {
		n, r, ok1 := strings.Cut(ep.SetDivision, ".")
		a, g, ok2 := strings.Cut(r, ".")
		if !ok1 || !ok2 || strings.Contains(g, ".") || n != name {
			continue
		}
		inName = true
		switch {
		case a != area:
		case group == "*" || g == group:
			out = append(out, ep)
		case g == "*":
			wild = append(wild, ep)
		}
	}
	if !inName {
		return all
	}
	if len(out) == 0 {
		return wild
	}
	return out
}
