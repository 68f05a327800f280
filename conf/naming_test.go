package conf

import (
	"strings"
	"testing"
)

func TestNamingKeys(t *testing.T) {
	c, err := Parse([]byte(`locator = "tars.tarsregistry.QueryObj@tcp -h 127.0.0.1 -p 17890"
refresh-endpoint-interval = "1s"
enableset = true
setdivision = "app.sz.*"
endpoint-cache = "/tmp/x"
`))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := Parse([]byte(`naming = "etcd://127.0.0.1:2379/tars"`)); err != nil || n.Naming.Source != "etcd://127.0.0.1:2379/tars" {
		t.Fatalf("naming key: %q, %v", n.Naming.Source, err)
	}
	if c.Locator == "" || !c.EnableSet || c.SetDivision != "app.sz.*" || c.EndpointCache != "/tmp/x" {
		t.Fatalf("naming keys not read: %+v", c.Naming)
	}
	for _, tc := range []struct{ toml, want string }{
		{`enableset = true`, `conf: setdivision = "": must be "name.area.group"`},
		{`enableset = true` + "\n" + `setdivision = "a.b"`, `must be "name.area.group"`},
		{`enableset = true` + "\n" + `setdivision = "*.b.c"`, `the name and the area must not be "*"`},
		{`enableset = true` + "\n" + `setdivision = "a.*.c"`, `the name and the area must not be "*"`},
		{`setdivision = "a..c"`, `empty part`},
		{`locator = "tars.tarsregistry.QueryObj"`, `conf: locator = "tars.tarsregistry.QueryObj": must be a proxy string`},
		{`locator = "Q@tcp -h h -p 1"` + "\n" + `naming-file = "f"`, `cannot be combined with locator`},
		{`naming = "127.0.0.1:2379"`, `conf: naming = "127.0.0.1:2379": must be "scheme://..."`},
		{`naming = "://x"`, `must be "scheme://..."`},
		{`naming = "file://f"` + "\n" + `naming-file = "f"`, `naming = "file://f": cannot be combined with locator or naming-file`},
		{`naming = "dns://h:1"` + "\n" + `locator = "Q@tcp -h h -p 1"`, `cannot be combined`},
	} {
		_, err := Parse([]byte(tc.toml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.toml, err, tc.want)
		}
	}
}
