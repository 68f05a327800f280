package conf_test

import (
	"slices"
	"testing"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
)

// TestBalancerNamesMatchEndpoint keeps conf's copy of the balancer names (conf may not import
// endpoint) equal to the names endpoint.NewBalancer accepts.
func TestBalancerNamesMatchEndpoint(t *testing.T) {
	if !slices.Equal(conf.BalancerNames, endpoint.Names) {
		t.Fatalf("conf balancer names = %q, endpoint.Names = %q", conf.BalancerNames, endpoint.Names)
	}
	for _, name := range conf.BalancerNames {
		if _, err := endpoint.NewBalancer(name); err != nil {
			t.Errorf("conf accepts load-balance %q but endpoint.NewBalancer does not: %v", name, err)
		}
	}
	if _, err := endpoint.NewBalancer(conf.Default().LoadBalance); err != nil {
		t.Errorf("default load-balance: %v", err)
	}
}

// TestFullFileEndpoints checks that the reference file's adapter endpoints are valid endpoints.
func TestFullFileEndpoints(t *testing.T) {
	c, err := conf.Load("testdata/full.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Server.Adapters) == 0 {
		t.Fatal("testdata/full.toml has no [[server.adapter]]")
	}
	for i, a := range c.Server.Adapters {
		if _, err := endpoint.ParseEndpoint(a.Endpoint); err != nil {
			t.Errorf("server.adapter[%d].endpoint: %v", i, err)
		}
	}
}
