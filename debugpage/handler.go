package debugpage

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"html/template"
	"net/http"
	"strings"

	"github.com/tarscomm/tarscomm/stats"
)

// Options configure the page.
type Options struct {
	// Title heads the page. Default "tarscomm".
	Title string
	// Config, if set, is shown under "Configuration" (e.g. Communicator.Config()): a struct, or a
	// map with string keys, key by key as its file names them (toml tags), through pointers and
	// interfaces, with the values of keys that look like secrets ("secret", "password") masked;
	// anything else as JSON.
	Config any
	// Balancers, if set, lists the values load-balance accepts, each with what it does (Key:
	// the name, Value: the description), under "Balancers".
	Balancers []Setting
}

//go:embed page.html
var pageHTML string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"pct":  func(f float64) string { return fmtFloat(f*100) + "%" },
	"ms":   func(f float64) string { return fmtFloat(f) },
	"json": func(v any) (string, error) { b, err := json.MarshalIndent(v, "", "  "); return string(b), err },
	"chartW": func(bars []Bar) int {
		return len(bars) * (barW + barGap)
	},
	"baseY":  func() int { return chartTop + chartH },
	"labelY": func() int { return chartTop + chartH + 13 },
	"svgH":   func() int { return chartTop + chartH + 18 },
}).Parse(pageHTML))

func fmtFloat(f float64) string {
	b, _ := json.Marshal(float64(int64(f*1000+0.5)) / 1000)
	return string(b)
}

// Handler returns the page of src's snapshots: HTML, or JSON for "?format=json" and paths ending
// in ".json".
func Handler(src func() stats.Snapshot, o Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := newView(src(), o)
		w.Header().Set("Cache-Control", "no-store")
		if r.URL.Query().Get("format") == "json" || strings.HasSuffix(r.URL.Path, ".json") {
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			_ = enc.Encode(v)
			return
		}
		var buf bytes.Buffer
		if err := page.Execute(&buf, v); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(buf.Bytes())
	})
}
