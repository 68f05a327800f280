package gen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/ast"
)

// funcInfo is what the stubs of one function need.
type funcInfo struct {
	fn         *ast.Func
	goName     string // exported function name
	args       *ast.Struct
	argsName   string
	result     *ast.Struct
	resultName string
	argNames   map[*ast.Field]string // Go field names of args
	resNames   map[*ast.Field]string // Go field names of result
	ins, outs  []*ast.Param
	params     map[*ast.Param]string // Go names of the parameters (funcInfo: paramName, made unique)
	retField   *ast.Field            // nil for void
	outFields  []*ast.Field
	inFields   []*ast.Field
}

func (g *gen) funcInfo(it *ast.Interface, fn *ast.Func) *funcInfo {
	fi := &funcInfo{fn: fn, goName: exported(fn.Name)}
	fi.args = &ast.Struct{Pos: fn.Pos, Name: fn.Name, Module: it.Module}
	fi.result = &ast.Struct{Pos: fn.Pos, Name: fn.Name, Module: it.Module}
	if fn.Ret.Kind != ast.Void {
		fi.retField = &ast.Field{Pos: fn.Pos, Tag: 0, Required: true, Type: fn.Ret, Name: "ret"}
		fi.result.Fields = append(fi.result.Fields, fi.retField)
	}
	for _, prm := range fn.Params {
		f := &ast.Field{Pos: prm.Pos, Tag: prm.Tag, Required: true, Type: prm.Type, Name: prm.Name}
		if prm.Out {
			fi.outs = append(fi.outs, prm)
			fi.outFields = append(fi.outFields, f)
			fi.result.Fields = append(fi.result.Fields, f)
		} else {
			fi.ins = append(fi.ins, prm)
			fi.inFields = append(fi.inFields, f)
			fi.args.Fields = append(fi.args.Fields, f)
		}
	}
	// The hidden types' names double the underscores of the interface's and function's, so that
	// I.f_x and I_f.x do not both make _I_f_x_args.
	hidden := "_" + strings.ReplaceAll(it.Name, "_", "__") + "_" + strings.ReplaceAll(fn.Name, "_", "__")
	fi.argsName = hidden + "_args"
	if len(fi.outs) > 0 {
		fi.resultName = g.aside(exported(it.Name)+fi.goName+"Result", "")
	} else {
		fi.resultName = hidden + "_result"
	}
	fi.argNames = fieldNames(fi.args)
	fi.resNames = fieldNames(fi.result)
	// The parameters' Go names: none a keyword, _, a name the signatures use, the package name
	// of a module (a parameter "user" would hide the package of module User in the bodies), or a
	// Go name of the package (a parameter "Status" would hide type Status, which the bodies of a
	// function returning one name; "IFResult" the result type), and all distinct ("ret" and
	// "ret_" both given). Each is the IDL name with underscores added until it is none of these.
	fi.params = map[*ast.Param]string{}
	taken := map[string]bool{fi.argsName: true, fi.resultName: true}
	for _, prm := range fn.Params {
		name := paramName(prm.Name)
		for taken[name] || signatureNames[name] || g.aliases[name] || g.pkgNames[name] || g.declared(name) {
			name += "_"
		}
		taken[name] = true
		fi.params[prm] = name
	}
	return fi
}

// aside returns name, the Go name of a type the generator makes for an interface, with
// underscores added until neither it nor prefix+name (a companion: NewXProxy,
// UnimplementedXServer) is a name of the user's types, enumerators and constants in the package
// or one declared so far: a struct GameServer beside interface Game keeps its name, and the
// interface's server type is GameServer_.
func (g *gen) aside(name, prefix string) string {
	taken := func(n string) bool { return g.pkgNames[n] || g.declared(n) }
	for taken(name) || prefix != "" && taken(prefix+name) {
		name += "_"
	}
	return name
}

// declared reports whether the package declares the Go name name in a file generated so far.
func (g *gen) declared(name string) bool {
	_, ok := g.names[name]
	return ok
}

// futureType is the value type of the function's futures: the return type without out
// parameters (struct{} for void), else the result struct.
func (g *gen) futureType(fi *funcInfo) string {
	if len(fi.outs) > 0 {
		return fi.resultName
	}
	if fi.retField == nil {
		return "struct{}"
	}
	return g.goType(fi.fn.Ret)
}

// futureValue is the expression of the future's value from the decoded result r.
func futureValue(fi *funcInfo, r string) string {
	if len(fi.outs) > 0 {
		return r
	}
	if fi.retField == nil {
		return "struct{}{}"
	}
	return r + "." + fi.resNames[fi.retField]
}

// localNames are the names of the locals of one function's proxy methods, chosen not to collide
// with its parameters: each is the usual name, with underscores added while a parameter has it.
type localNames struct {
	recv, a, e, r, f, zero string
}

func newLocalNames(fi *funcInfo) localNames {
	taken := map[string]bool{"ctx": true, "opts": true, "cb": true, "err": true}
	for _, prm := range fi.ins {
		taken[fi.params[prm]] = true
	}
	pick := func(want string) string {
		for taken[want] {
			want += "_"
		}
		taken[want] = true
		return want
	}
	return localNames{recv: pick("p"), a: pick("a"), e: pick("e"), r: pick("r"), f: pick("f"), zero: pick("zero")}
}

// inParams is the parameter list of the in parameters, "id string, n int32".
func (g *gen) inParams(fi *funcInfo) string {
	var ps []string
	for _, prm := range fi.ins {
		ps = append(ps, fi.params[prm]+" "+g.goType(prm.Type))
	}
	return strings.Join(ps, ", ")
}

// inArgs is the args struct literal built from the in parameters.
func (g *gen) argsLiteral(fi *funcInfo) string {
	var ps []string
	for i, prm := range fi.ins {
		ps = append(ps, fi.argNames[fi.inFields[i]]+": "+fi.params[prm])
	}
	return fi.argsName + "{" + strings.Join(ps, ", ") + "}"
}

// resultTypes is the list of result types: the return value, then the out parameters.
func (g *gen) resultTypes(fi *funcInfo) []string {
	var ts []string
	if fi.retField != nil {
		ts = append(ts, g.goType(fi.fn.Ret))
	}
	for _, prm := range fi.outs {
		ts = append(ts, g.goType(prm.Type))
	}
	return ts
}

// resultNamed is the result list with names: "ret int32, activeEp []EndpointF".
func (g *gen) resultNamed(fi *funcInfo) []string {
	var ts []string
	if fi.retField != nil {
		ts = append(ts, "ret "+g.goType(fi.fn.Ret))
	}
	for _, prm := range fi.outs {
		ts = append(ts, fi.params[prm]+" "+g.goType(prm.Type))
	}
	return ts
}

// resultValues is the list of r's fields in result order.
func resultValues(fi *funcInfo, r string) []string {
	var vs []string
	if fi.retField != nil {
		vs = append(vs, r+"."+fi.resNames[fi.retField])
	}
	for _, f := range fi.outFields {
		vs = append(vs, r+"."+fi.resNames[f])
	}
	return vs
}

func (g *gen) genInterface(it *ast.Interface) error {
	name := exported(it.Name)
	proxy, srv, register := g.aside(name+"Proxy", "New"), g.aside(name+"Server", "Unimplemented"), g.aside("Register"+name, "")
	for _, n := range []string{proxy, "New" + proxy, srv, "Unimplemented" + srv, register} {
		if err := g.declare(n, it.Pos); err != nil {
			return err
		}
	}
	// Method names of the proxy must not collide.
	methods := map[string]string{"SetServantProxy": "the Setter method", "ServantProxy": "the ServantProxy accessor",
		"SetPushCallback": "the push callback's setter"}
	var fis []*funcInfo
	for _, fn := range it.Funcs {
		fi := g.funcInfo(it, fn)
		for _, m := range []string{fi.goName, "Async" + fi.goName, "Oneway" + fi.goName, "Future" + fi.goName} {
			if prev, dup := methods[m]; dup {
				return fmt.Errorf("%s: function %s: generated method %s.%s collides with %s", fn.Pos, fn.Name, proxy, m, prev)
			}
			methods[m] = "the stub of function " + fn.Name
		}
		for _, n := range []string{fi.argsName, fi.resultName} {
			if err := g.declare(n, fn.Pos); err != nil {
				return err
			}
		}
		fis = append(fis, fi)
	}
	for _, fi := range fis {
		g.genStruct(fi.args, fi.argsName, it.Name+"."+fi.fn.Name, fmt.Sprintf("%s holds the in parameters of %s.%s, at their tags.", fi.argsName, it.Name, fi.fn.Name), nil)
		def := fmt.Sprintf("%s holds the reply of %s.%s: the return value at tag 0 and the out parameters at their tags.", fi.resultName, it.Name, fi.fn.Name)
		g.genStruct(fi.result, fi.resultName, it.Name+"."+fi.fn.Name, def, nil)
	}
	g.genProxy(it, proxy, fis)
	g.genServer(it, name, register, srv, fis)
	return nil
}

func (g *gen) genProxy(it *ast.Interface, proxy string, fis []*funcInfo) {
	sp := g.use(servantproxyPkg) + ".ServantProxy"
	opt := "servantproxy.CallOption"
	ctx := g.use("context") + ".Context"
	codec := g.use(codecPkg)
	errs := g.use("errors")
	fut := "future"
	g.doc(it.Doc, fmt.Sprintf("%s calls the TARS interface %s::%s. Bind it to a servant with Communicator.StringToProxy, or wrap a ServantProxy with New%s; an unbound %s must not be called. It is safe for concurrent use.", proxy, it.Module.Name, it.Name, proxy, proxy))
	g.p("type ", proxy, " struct {")
	g.p("sp *", sp)
	g.p("}")
	g.p()
	g.p("var _ servantproxy.Setter = (*", proxy, ")(nil)")
	g.p()
	g.p("// New", proxy, " returns a proxy that calls through sp.")
	g.p("func New", proxy, "(sp *", sp, ") *", proxy, " { return &", proxy, "{sp: sp} }")
	g.p()
	g.p("// SetServantProxy binds p to sp; Communicator.StringToProxy calls it.")
	g.p("func (p *", proxy, ") SetServantProxy(sp *", sp, ") { p.sp = sp }")
	g.p()
	g.p("// ServantProxy returns the untyped proxy p calls through, nil while p is unbound.")
	g.p("func (p *", proxy, ") ServantProxy() *", sp, " { return p.sp }")
	g.p()
	g.p("// SetPushCallback makes cb receive what the servant pushes on p's connections, and their")
	g.p("// connects and closes; nil stops it (see servantproxy.ServantProxy.SetPushCallback).")
	g.p("func (p *", proxy, ") SetPushCallback(cb *", g.use(servantproxyPkg), ".PushCallback) { p.sp.SetPushCallback(cb) }")
	g.p()
	for _, fi := range fis {
		fn := strconv.Quote(fi.fn.Name)
		params := g.inParams(fi)
		if params != "" {
			params += ", "
		}
		rts := g.resultTypes(fi)
		cbType := "func(" + strings.Join(append(g.resultNamed(fi), "err error"), ", ") + ")"

		l := newLocalNames(fi)
		recv := "(" + l.recv + " *" + proxy + ") "
		encode := func() {
			g.p(l.a, " := ", g.argsLiteral(fi))
			g.p("var ", l.e, " ", codec, ".Encoder")
			g.p(l.a, ".Encode(&", l.e, ")")
		}
		// The reply is decoded into r by servantproxy (InvokeTars, AsyncInvokeTars), before the
		// interceptors' End: a body that does not decode is a *CallError matching ErrDecode.
		// On any error r is given back zero (a failed decode may have filled part of it).
		zeroOnErr := func() {
			g.p("if err != nil {")
			g.p(l.r, " = ", fi.resultName, "{}")
			g.p("}")
		}

		// Sync.
		g.p("// ", fi.goName, " calls ", fi.fn.Name, " and waits for its reply, until the earlier of ctx's deadline")
		g.p("// and the sync invoke timeout.")
		if len(fi.fn.Doc) > 0 {
			g.p("//")
			g.doc(fi.fn.Doc, "")
		}
		g.p("func ", recv, fi.goName, "(ctx ", ctx, ", ", params, "opts ...", opt, ") (", strings.Join(append(append([]string{}, rts...), "error"), ", "), ") {")
		encode()
		g.p("var ", l.r, " ", fi.resultName)
		g.p("err := ", l.recv, ".sp.InvokeTars(ctx, ", fn, ", ", l.e, ".Buf, &", l.r, ", opts...)")
		zeroOnErr()
		g.p("return ", strings.Join(append(resultValues(fi, l.r), "err"), ", "))
		g.p("}")
		g.p()

		// Async.
		g.p("// Async", fi.goName, " sends a ", fi.fn.Name, " call and returns at once. cb runs on one of the")
		g.p("// Communicator's async workers with the reply or the call's error (and zero values): exactly")
		g.p("// once if Async", fi.goName, " returns nil, never if it returns an error. The deadline is the")
		g.p("// earlier of ctx's and the async invoke timeout.")
		g.p("func ", recv, "Async", fi.goName, "(ctx ", ctx, ", ", params, "cb ", cbType, ", opts ...", opt, ") error {")
		g.p("if cb == nil {")
		g.p("return ", errs, ".New(", strconv.Quote("tarscomm: "+proxy+".Async"+fi.goName+": nil callback"), ")")
		g.p("}")
		encode()
		g.p("var ", l.r, " ", fi.resultName)
		g.p("return ", l.recv, ".sp.AsyncInvokeTars(ctx, ", fn, ", ", l.e, ".Buf, &", l.r, ", func(err error) {")
		zeroOnErr()
		g.p("cb(", strings.Join(append(resultValues(fi, l.r), "err"), ", "), ")")
		g.p("}, opts...)")
		g.p("}")
		g.p()

		// One-way.
		g.p("// Oneway", fi.goName, " sends ", fi.fn.Name, " as a one-way call: the server runs it and sends no")
		g.p("// reply. It returns once the request is written to a connection, or with the error that")
		g.p("// prevented it.")
		g.p("func ", recv, "Oneway", fi.goName, "(ctx ", ctx, ", ", params, "opts ...", opt, ") error {")
		encode()
		g.p("return ", l.recv, ".sp.InvokeOnewayRaw(ctx, ", fn, ", ", l.e, ".Buf, opts...)")
		g.p("}")
		g.p()

		// Future.
		ft := g.futureType(fi)
		fut = g.use(futurePkg)
		g.p("// Future", fi.goName, " sends a ", fi.fn.Name, " call and returns at once a future of its reply,")
		g.p("// completed on one of the Communicator's async workers (no goroutine per call). A call that")
		g.p("// cannot be sent completes the future at once with its error.")
		g.p("func ", recv, "Future", fi.goName, "(ctx ", ctx, ", ", params, "opts ...", opt, ") *", fut, ".Future[", ft, "] {")
		g.p(l.f, " := ", g.use(servantproxyPkg), ".NewCallFuture[", ft, "](", l.recv, ".sp, ctx)")
		encode()
		g.p("var ", l.r, " ", fi.resultName)
		g.p("err := ", l.recv, ".sp.AsyncInvokeTars(ctx, ", fn, ", ", l.e, ".Buf, &", l.r, ", func(err error) {")
		zeroOnErr()
		g.p(l.f, ".Complete(", futureValue(fi, l.r), ", err)")
		g.p("}, opts...)")
		g.p("if err != nil {")
		g.p("var ", l.zero, " ", ft)
		g.p(l.f, ".Complete(", l.zero, ", err)")
		g.p("}")
		g.p("return ", l.f)
		g.p("}")
		g.p()
	}
}

func (g *gen) genServer(it *ast.Interface, name, register, iface string, fis []*funcInfo) {
	ctx := g.use("context") + ".Context"
	srvPkg := g.use(serverPkg)
	codec := g.use(codecPkg)
	errs := g.use("errors")
	g.p("// ", iface, " is the server side of the TARS interface ", it.Module.Name, "::", it.Name, ": serve an")
	g.p("// implementation with ", register, ". Each method gets the request's Current (context and")
	g.p("// status maps, client timeout; it may set the reply's maps) and the in parameters, and answers")
	g.p("// with the return value and the out parameters, or an error: a *server.Error gives the TARS")
	g.p("// return code and description.")
	if len(it.Doc) > 0 {
		g.p("//")
		g.doc(it.Doc, "")
	}
	g.p("type ", iface, " interface {")
	for i, fi := range fis {
		if i > 0 {
			g.p()
		}
		if len(fi.fn.Doc) > 0 {
			g.doc(fi.fn.Doc, "")
		} else {
			g.p("// ", fi.goName, " serves function ", strconv.Quote(fi.fn.Name), ".")
		}
		params := g.inParams(fi)
		if params != "" {
			params = ", " + params
		}
		g.p(fi.goName, "(ctx ", ctx, ", cur *", srvPkg, ".Current", params, ") (", strings.Join(append(g.resultNamed(fi), "err error"), ", "), ")")
	}
	g.p("}")
	g.p()
	unimpl := "Unimplemented" + iface
	g.p("// ", unimpl, " answers every function with codec.RetNoFunc. Embed it in an implementation of")
	g.p("// ", iface, " so that functions added to the interface later compile and answer as unknown")
	g.p("// functions until they are implemented.")
	g.p("type ", unimpl, " struct{}")
	g.p()
	for _, fi := range fis {
		var types []string
		for _, prm := range fi.ins {
			types = append(types, g.goType(prm.Type))
		}
		params := strings.Join(types, ", ")
		if params != "" {
			params = ", " + params
		}
		g.p("// ", fi.goName, " answers codec.RetNoFunc.")
		g.p("func (", unimpl, ") ", fi.goName, "(", ctx, ", *", srvPkg, ".Current", params, ") (", strings.Join(append(g.resultTypes(fi), "error"), ", "), ") {")
		if len(resultValues(fi, "r")) > 0 {
			g.p("var r ", fi.resultName)
		}
		g.p("return ", strings.Join(append(resultValues(fi, "r"), "&"+srvPkg+".Error{Code: "+codec+".RetNoFunc, Desc: "+strconv.Quote("function "+fi.fn.Name+" not implemented")+"}"), ", "))
		g.p("}")
		g.p()
	}
	g.p("// ", register, " registers impl as servant (a TARS object name such as")
	g.p("// \"App.Server.", name, "Obj\") on s: each function of the interface is served by the method of")
	g.p("// ", iface, " of the same name. A request body that does not decode is answered with")
	g.p("// codec.RetServerDecode; functions the interface does not have are answered by s with")
	g.p("// codec.RetNoFunc. Call it before s.Start.")
	g.p("func ", register, "(s *", srvPkg, ".Server, servant string, impl ", iface, ") error {")
	g.p("if impl == nil {")
	g.p("return ", errs, ".New(", strconv.Quote("tarscomm: "+register+": nil implementation"), ")")
	g.p("}")
	for _, fi := range fis {
		g.p("if err := s.Handle(servant, ", strconv.Quote(fi.fn.Name), ", func(ctx ", ctx, ", cur *", srvPkg, ".Current, req, rsp []byte) ([]byte, error) {")
		g.p("var a ", fi.argsName)
		g.p("if err := a.UnmarshalTars(req); err != nil {")
		g.p("return nil, &", srvPkg, ".Error{Code: ", codec, ".RetServerDecode, Desc: err.Error()}")
		g.p("}")
		g.p("var r ", fi.resultName)
		g.p("var err error")
		var args []string
		for _, f := range fi.inFields {
			args = append(args, "a."+fi.argNames[f])
		}
		call := "impl." + fi.goName + "(" + strings.Join(append([]string{"ctx", "cur"}, args...), ", ") + ")"
		g.p(strings.Join(append(resultValues(fi, "r"), "err"), ", "), " = ", call)
		g.p("if err != nil {")
		g.p("return nil, err")
		g.p("}")
		g.p("return r.MarshalTars(rsp), nil")
		g.p("}); err != nil {")
		g.p("return err")
		g.p("}")
	}
	g.p("return nil")
	g.p("}")
	g.p()
}
