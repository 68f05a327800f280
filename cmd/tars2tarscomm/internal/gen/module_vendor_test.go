package gen

import "testing"

// TestModuleUnderVendor: a module nested in a module named Vendor (Vendor::Api, or module Api
// inside module Vendor) went to <out>/vendor/api, an import path the go command refuses to import
// ("... must be imported as api"): the module that used its types did not build, nor would any
// code of the user's importing the package. Now the directory is vendor_tars/api (moduleDir;
// internal and testdata alike).
func TestModuleUnderVendor(t *testing.T) {
	mustBuild(t, [2]string{"m.tars", `
module Vendor { module Api { struct Info { 0 optional int x; }; }; };
module App { struct S { 0 optional Vendor::Api::Info i; }; };
`})
}
