package conf

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Report holds the keys of TARS stat and property reporting, top-level keys as TARS writes them
// in its client section. Reporting to a service is off while its key is empty.
type Report struct {
	// Stat is the stat service, an object name resolved through the locator
	// ("tars.tarsstat.StatObj") or a proxy string with '@'. TARS "stat": default "" (off).
	Stat string `toml:"stat"`

	// Property is the property service, as Stat. TARS "property": default "" (off).
	Property string `toml:"property"`

	// ModuleName is this process's module, "App.Server": the caller's name in stat reports and
	// the module of properties. TARS "modulename": default "" (required when Stat or Property is
	// set).
	ModuleName string `toml:"modulename"`

	// ReportInterval is how often stats and properties are sent. TARS "report-interval"
	// (milliseconds there): default 60s, 1s..1h. (TarsCpp raises values below 10s to 10s.)
	ReportInterval time.Duration `toml:"report-interval"`

	// MaxReportSize bounds one report's batch, counted as TarsCpp counts it. TARS
	// "max-report-size": default 1400, 500..1400.
	MaxReportSize int `toml:"max-report-size"`
}

// DefaultReport returns TARS's defaults of the reporting keys.
func DefaultReport() Report {
	return Report{ReportInterval: 60 * time.Second, MaxReportSize: 1400}
}

// Validate reports every value out of its range, as Config.Validate does, one line per key.
func (r *Report) Validate() error {
	v := validator{}
	v.durRange("report-interval", r.ReportInterval, time.Second, time.Hour)
	v.intRange("max-report-size", r.MaxReportSize, 500, 1400)
	for _, k := range []struct{ key, val string }{{"stat", r.Stat}, {"property", r.Property}} {
		if k.val == "" {
			continue
		}
		name, _, _ := strings.Cut(k.val, "@")
		if p := nameProblem(strings.TrimSpace(name)); p != "" {
			v.add(k.key, strconv.Quote(k.val), p)
		}
		if r.ModuleName == "" {
			v.errs = append(v.errs, errors.New("conf: modulename: must be set when "+k.key+" is set"))
		}
	}
	if strings.ContainsFunc(r.ModuleName, func(c rune) bool { return c == ' ' || c == '@' || c == '\t' }) {
		v.add("modulename", strconv.Quote(r.ModuleName), "must not contain white space or '@'")
	}
	return errors.Join(v.errs...)
}
