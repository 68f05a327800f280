package conf_test

import (
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/tarscomm/tarscomm/conf"
)

func TestReportKeysDecodeFlat(t *testing.T) {
	// Embedded without a tag, Report's keys are top-level keys of the file, as in TARS.
	var c struct {
		conf.Report
		NetThread int `toml:"netthread"`
	}
	c.Report = conf.DefaultReport()
	md, err := toml.Decode(`
netthread = 2
stat = "tars.tarsstat.StatObj"
property = "tars.tarsproperty.PropertyObj@tcp -h 127.0.0.1 -p 1"
modulename = "Test.Client"
report-interval = "10s"
max-report-size = 900
`, &c)
	if err != nil {
		t.Fatal(err)
	}
	if u := md.Undecoded(); len(u) != 0 {
		t.Fatalf("undecoded keys %v", u)
	}
	want := conf.Report{Stat: "tars.tarsstat.StatObj", Property: "tars.tarsproperty.PropertyObj@tcp -h 127.0.0.1 -p 1",
		ModuleName: "Test.Client", ReportInterval: 10 * time.Second, MaxReportSize: 900}
	if c.Report != want || c.NetThread != 2 {
		t.Fatalf("got %+v", c)
	}
	if err := c.Report.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestReportValidate(t *testing.T) {
	d := conf.DefaultReport()
	if err := d.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if d.ReportInterval != time.Minute || d.MaxReportSize != 1400 || d.Stat != "" {
		t.Fatalf("defaults %+v", d)
	}
	bad := conf.Report{Stat: "a b@x", ReportInterval: time.Millisecond, MaxReportSize: 2000}
	err := bad.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{
		`conf: report-interval = "1ms": must be between 1s and 1h`,
		`conf: max-report-size = 2000: must be between 500 and 1400`,
		`conf: stat = "a b@x": servant name must not contain white space`,
		`conf: modulename: must be set when stat is set`,
	} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("missing %q in:\n%v", s, err)
		}
	}
}
