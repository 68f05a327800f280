// Package cookie is TARS's cookie: the entries of a request's status map whose key is not
// "STATUS_" followed by more, in any case (the framework's own keys are), which a server hands on
// to every call its handler makes on the request's behalf (TarsCpp's ServantHandle::processCookie
// and ServantProxy::checkCookie). A front server that gets {"uid": "42"} from its caller passes
// it to the services behind it without the handler's code knowing the key.
//
// A server puts a request's cookies in the handler's context (FromRequest, then WithCookies); a
// call made with that context adds them to its status map (Apply), without replacing an entry
// the call sets itself.
package cookie
