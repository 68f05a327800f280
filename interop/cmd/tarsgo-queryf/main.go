// Command tarsgo-queryf is the TarsGo side of the QueryF interop tests, built on TarsGo v1.4.6's
// own generated package for QueryF.tars (github.com/TarsCloud/TarsGo/tars/protocol/res/queryf):
//
//	tarsgo-queryf serve -config server.conf   # serve QueryF as <app>.<server>.QueryObj
//	tarsgo-queryf call -proxy 'Obj@tcp -h 127.0.0.1 -p 1234' -ids a,b,empty
//
// Both follow package queryfixture. call invokes every function of QueryF for each id with
// TarsGo's generated proxy and writes one JSON Answer per call on stdout.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/TarsCloud/TarsGo/tars"
	"github.com/TarsCloud/TarsGo/tars/protocol/res/endpointf"
	"github.com/TarsCloud/TarsGo/tars/protocol/res/queryf"

	"github.com/tarscomm/tarscomm/interop/internal/queryfixture"
)

// Answer is the outcome of one call made by call.
type Answer struct {
	Func     string                `json:"func"`
	ID       string                `json:"id"`
	Arg      string                `json:"arg,omitempty"` // station or set
	Ret      int32                 `json:"ret"`
	Active   []endpointf.EndpointF `json:"active"`
	Inactive []endpointf.EndpointF `json:"inactive"`
	Err      string                `json:"err,omitempty"`
	ErrCode  int32                 `json:"err_code,omitempty"` // tars.GetErrorCode of Err
}

func main() {
	if len(os.Args) < 2 {
		fatal("usage: tarsgo-queryf serve|call ...")
	}
	switch os.Args[1] {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ExitOnError)
		config := fs.String("config", "", "TarsGo server configuration file")
		_ = fs.Parse(os.Args[2:])
		tars.ServerConfigPath = *config
		cfg := tars.GetServerConfig()
		obj := cfg.App + "." + cfg.Server + ".QueryObj"
		tars.AddServant(new(queryf.QueryF), impl{}, obj)
		fmt.Println("tarsgo-queryf: serving", obj)
		tars.Run()
	case "call":
		out := os.Stdout
		os.Stdout = os.Stderr // TarsGo logs to stdout
		fs := flag.NewFlagSet("call", flag.ExitOnError)
		proxy := fs.String("proxy", "", "QueryF proxy string")
		ids := fs.String("ids", "a", "comma-separated servant ids")
		_ = fs.Parse(os.Args[2:])
		comm := tars.NewCommunicator()
		q := new(queryf.QueryF)
		comm.StringToProxy(*proxy, q)
		enc := json.NewEncoder(out)
		for _, id := range strings.Split(*ids, ",") {
			for _, a := range callAll(q, id) {
				if err := enc.Encode(a); err != nil {
					fatal("write: %v", err)
				}
			}
		}
	default:
		fatal("unknown mode %q", os.Args[1])
	}
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "tarsgo-queryf: "+format+"\n", args...)
	os.Exit(1)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func errCode(err error) int32 {
	if err == nil {
		return 0
	}
	return tars.GetErrorCode(err)
}

func callAll(q *queryf.QueryF, id string) []Answer {
	var out []Answer
	eps, err := q.FindObjectById(id)
	out = append(out, Answer{Func: "findObjectById", ID: id, Active: eps, Err: errText(err)})
	for _, f := range []struct {
		name string
		call func(string, *[]endpointf.EndpointF, *[]endpointf.EndpointF, ...map[string]string) (int32, error)
	}{
		{"findObjectById4Any", q.FindObjectById4Any},
		{"findObjectById4All", q.FindObjectById4All},
		{"findObjectByIdInSameGroup", q.FindObjectByIdInSameGroup},
	} {
		var a, in []endpointf.EndpointF
		ret, err := f.call(id, &a, &in)
		out = append(out, Answer{Func: f.name, ID: id, Ret: ret, Active: a, Inactive: in, Err: errText(err)})
	}
	var a, in []endpointf.EndpointF
	ret, err := q.FindObjectByIdInSameStation(id, "sz", &a, &in)
	out = append(out, Answer{Func: "findObjectByIdInSameStation", ID: id, Arg: "sz", Ret: ret, Active: a, Inactive: in, Err: errText(err)})
	a, in = nil, nil
	ret, err = q.FindObjectByIdInSameSet(id, "app.sz.1", &a, &in)
	out = append(out, Answer{Func: "findObjectByIdInSameSet", ID: id, Arg: "app.sz.1", Ret: ret, Active: a, Inactive: in, Err: errText(err), ErrCode: errCode(err)})
	return out
}

// impl serves QueryF as package queryfixture says.
type impl struct{}

func conv(eps []queryfixture.Endpoint) []endpointf.EndpointF {
	out := make([]endpointf.EndpointF, len(eps))
	for i, e := range eps {
		out[i] = endpointf.EndpointF{Host: e.Host, Port: e.Port, Timeout: e.Timeout, Istcp: e.Istcp, Grid: e.Grid,
			Groupworkid: e.Groupworkid, Grouprealid: e.Grouprealid, SetId: e.SetId, Qos: e.Qos, BakFlag: e.BakFlag,
			Weight: e.Weight, WeightType: e.WeightType, AuthType: e.AuthType}
	}
	return out
}

func (impl) FindObjectById(id string) ([]endpointf.EndpointF, error) {
	return conv(queryfixture.Active(id)), nil
}

func (impl) both(fn, key string, a, in *[]endpointf.EndpointF) (int32, error) {
	*a, *in = conv(queryfixture.Active(key)), conv(queryfixture.Inactive(key))
	return queryfixture.Ret(fn, key), nil
}

func (i impl) FindObjectById4Any(id string, a, in *[]endpointf.EndpointF) (int32, error) {
	return i.both("findObjectById4Any", id, a, in)
}

func (i impl) FindObjectById4All(id string, a, in *[]endpointf.EndpointF) (int32, error) {
	return i.both("findObjectById4All", id, a, in)
}

func (i impl) FindObjectByIdInSameGroup(id string, a, in *[]endpointf.EndpointF) (int32, error) {
	return i.both("findObjectByIdInSameGroup", id, a, in)
}

func (i impl) FindObjectByIdInSameStation(id, station string, a, in *[]endpointf.EndpointF) (int32, error) {
	return i.both("findObjectByIdInSameStation", queryfixture.StationKey(id, station), a, in)
}

func (i impl) FindObjectByIdInSameSet(id, set string, a, in *[]endpointf.EndpointF) (int32, error) {
	return i.both("findObjectByIdInSameSet", queryfixture.SetKey(id, set), a, in)
}
