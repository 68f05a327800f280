package conf

import (
	"strconv"
	"strings"

	"github.com/tarscomm/tarscomm/endpoint"
)

// Naming is how the Communicator finds the endpoints of a proxy string without '@'. Its keys sit
// at the top level of the file, beside the other communicator keys, as in TARS.
type Naming struct {
	// Source is the naming source by name, "scheme://...": the scheme picks a source that
	// registered itself (package naming), the rest is the source's:
	//
	//	naming = "tars://tars.tarsregistry.QueryObj@tcp -h 10.0.0.1 -p 17890"   # = locator
	//	naming = "file:///etc/tars/naming.txt"                                  # = naming-file
	//	naming = "dns://greeter.default.svc.cluster.local:9000"                 # naming/dns
	//	naming = "dns+srv://_tars._tcp.greeter.default.svc.cluster.local"       # naming/dns
	//	naming = "etcd://127.0.0.1:2379/tars"  # needs import _ "github.com/tarscomm/tarscomm/etcd"
	//
	// An unknown scheme makes communicator.New fail, naming the registered ones. Not a TARS
	// key; it cannot be combined with Locator or NamingFile, which remain its short forms.
	Source string `toml:"naming"`
	// Locator is the TARS registry's query object, e.g. "tars.tarsregistry.QueryObj@tcp -h
	// 10.0.0.1 -p 17890:tcp -h 10.0.0.2 -p 17890" (TARS "locator"). When set, a proxy string
	// without '@' asks it for the object's endpoints, every refresh-endpoint-interval.
	Locator string `toml:"locator"`
	// EnableSet turns set routing on (TARS "enableset"): objects are looked up with
	// findObjectByIdInSameSet(obj, SetDivision), and calls carry the set.
	EnableSet bool `toml:"enableset"`
	// SetDivision is this client's set, "name.area.group" (TARS "setdivision"); required with
	// EnableSet. As in TarsCpp the name and the area may not be "*"; the group may.
	SetDivision string `toml:"setdivision"`
	// EndpointCache is a file where the last good registry answer per object is kept; a servant
	// starts from its entry at once, before the registry answers (a slow, dead or
	// empty-answering registry does not hold its calls), until the registry's first list with
	// active endpoints replaces it; "" for none. Not a TARS key (TarsCpp keeps
	// it in <datapath><server>.tarsdat).
	EndpointCache string `toml:"endpoint-cache"`
	// NamingFile is a file of proxy strings ("Obj@tcp -h ... :tcp -h ...", one object per line,
	// '#' starts a comment, every line ending in a newline) that resolves proxy strings without
	// '@', reloaded within a second of a change; "" for none. Update it by writing a temporary
	// file and renaming it over this one; a content is applied only once complete (package
	// naming/file). The Communicator refuses to start if it is missing, cut or does not parse.
	// Not a TARS key. It cannot be combined with Locator.
	NamingFile string `toml:"naming-file"`
}

// SetDivisionProblem says why s is not a valid set division by TarsCpp's rule (exactly three
// '.'-separated parts, neither of the first two "*" or empty; no white space), or returns "":
// endpoint.SetDivisionProblem.
func SetDivisionProblem(s string) string { return endpoint.SetDivisionProblem(s) }

// validateNaming adds the problems of the naming keys to v.
func (c *Config) validateNaming(v *validator) {
	n := &c.Naming
	if n.EnableSet || n.SetDivision != "" {
		if p := SetDivisionProblem(n.SetDivision); p != "" {
			v.add("setdivision", strconv.Quote(n.SetDivision), p)
		}
	}
	if n.Locator != "" && !strings.Contains(n.Locator, "@") {
		v.add("locator", strconv.Quote(n.Locator), `must be a proxy string with endpoints, "Obj@tcp -h host -p port"`)
	}
	if n.Locator != "" && n.NamingFile != "" {
		v.add("naming-file", strconv.Quote(n.NamingFile), "cannot be combined with locator")
	}
	if c.EndpointCache != "" {
		// Only the TARS registry's source keeps its answers there; the project's other sources
		// do not read it (a source registered by the program may).
		scheme, _, _ := strings.Cut(n.Source, "://")
		scheme = strings.ToLower(scheme) // as naming.ParseTarget reads it
		switch {
		case n.Locator == "" && n.NamingFile == "" && n.Source == "":
			v.add("endpoint-cache", strconv.Quote(c.EndpointCache), "keeps the registry's answers: needs locator")
		case n.NamingFile != "" || scheme == "file" || scheme == "dns" || scheme == "dns+srv" || scheme == "etcd":
			v.add("endpoint-cache", strconv.Quote(c.EndpointCache), "keeps the registry's answers, and this naming source is not the registry: needs locator")
		}
	}
	if n.Source != "" {
		if scheme, _, ok := strings.Cut(n.Source, "://"); !ok || scheme == "" {
			v.add("naming", strconv.Quote(n.Source), `must be "scheme://...", e.g. "etcd://127.0.0.1:2379/tars" or "dns://host:port"`)
		}
		if n.Locator != "" || n.NamingFile != "" {
			v.add("naming", strconv.Quote(n.Source), "cannot be combined with locator or naming-file (they are its short forms)")
		}
	}
}
