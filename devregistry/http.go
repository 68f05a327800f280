package devregistry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/endpoint"
)

// Handler returns the HTTP registration interface (package documentation): POST /register and
// /deregister with the form values obj, endpoint and (for /register) ttl; GET /objects.
func (r *Registry) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, req *http.Request) {
		obj, ep, ok := formEndpoint(w, req)
		if !ok {
			return
		}
		var ttl time.Duration
		if s := req.FormValue("ttl"); s != "" {
			d, err := time.ParseDuration(s)
			switch {
			case err != nil:
				http.Error(w, fmt.Sprintf("ttl = %q: a duration with a unit, e.g. 10s", s), http.StatusBadRequest)
				return
			case d < 0:
				http.Error(w, fmt.Sprintf("ttl = %q: must not be negative (0: no expiry)", s), http.StatusBadRequest)
				return
			}
			ttl = d
		}
		r.Register(obj, ep, ttl)
		r.log.Info("registered", zap.String("servant", obj), zap.Stringer("endpoint", ep), zap.Duration("ttl", ttl))
		fmt.Fprintf(w, "registered %s@%s\n", obj, ep)
	})
	mux.HandleFunc("POST /deregister", func(w http.ResponseWriter, req *http.Request) {
		obj, ep, ok := formEndpoint(w, req)
		if !ok {
			return
		}
		if !r.Deregister(obj, ep) {
			http.Error(w, fmt.Sprintf("%s@%s is not registered", obj, ep), http.StatusNotFound)
			return
		}
		r.log.Info("deregistered", zap.String("servant", obj), zap.Stringer("endpoint", ep))
		fmt.Fprintf(w, "deregistered %s@%s\n", obj, ep)
	})
	mux.HandleFunc("GET /objects", func(w http.ResponseWriter, _ *http.Request) {
		type lists struct {
			Active   []string `json:"active"`
			Inactive []string `json:"inactive"`
		}
		out := make(map[string]lists)
		for _, obj := range r.objects() {
			l := r.Lookup(obj)
			out[obj] = lists{Active: strs(l.Active), Inactive: strs(l.Inactive)}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
	return mux
}

func strs(eps []endpoint.Endpoint) []string {
	out := make([]string, 0, len(eps))
	for _, ep := range eps {
		out = append(out, ep.String())
	}
	return out
}

// formEndpoint reads obj and endpoint from req, answering 400 if they are missing or bad.
func formEndpoint(w http.ResponseWriter, req *http.Request) (string, endpoint.Endpoint, bool) {
	obj := req.FormValue("obj")
	if obj == "" || strings.ContainsAny(obj, "@#") || strings.IndexFunc(obj, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		http.Error(w, fmt.Sprintf("obj = %q: an object name such as App.Server.EchoObj", obj), http.StatusBadRequest)
		return "", endpoint.Endpoint{}, false
	}
	ep, err := endpoint.ParseEndpoint(req.FormValue("endpoint"))
	if err == nil && ep.Port == 0 {
		err = errors.New("port 0: register the port the server bound")
	}
	if p := endpoint.SetDivisionProblem(ep.SetDivision); err == nil && ep.SetDivision != "" && p != "" {
		err = fmt.Errorf("set %q: %s", ep.SetDivision, p)
	}
	if err == nil {
		err = ep.Check() // what a client could not dial as given
	}
	if err != nil {
		http.Error(w, fmt.Sprintf("endpoint = %q: %v", req.FormValue("endpoint"), err), http.StatusBadRequest)
		return "", endpoint.Endpoint{}, false
	}
	return obj, ep, true
}

// Register registers ep ("tcp -h 127.0.0.1 -p 9000") for obj with the registry at baseURL (its
// HTTPURL) for ttl (0: until deregistered); call it again within ttl to renew.
func Register(ctx context.Context, baseURL, obj, ep string, ttl time.Duration) error {
	v := url.Values{"obj": {obj}, "endpoint": {ep}}
	if ttl > 0 {
		v.Set("ttl", ttl.String())
	}
	return post(ctx, baseURL+"/register", v)
}

// Deregister removes the registration of ep for obj from the registry at baseURL.
func Deregister(ctx context.Context, baseURL, obj, ep string) error {
	return post(ctx, baseURL+"/deregister", url.Values{"obj": {obj}, "endpoint": {ep}})
}

// client sends registrations on a connection each: they are rare, and no idle connection (and
// its goroutines) outlives them.
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

func post(ctx context.Context, u string, v url.Values) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(v.Encode()))
	if err != nil {
		return fmt.Errorf("devregistry: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rsp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("devregistry: %w", err)
	}
	defer rsp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(rsp.Body, 4096))
	if rsp.StatusCode != http.StatusOK {
		return fmt.Errorf("devregistry: %s: %s: %s", u, rsp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
