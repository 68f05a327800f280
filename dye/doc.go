// Package dye is TARS's dyeing: a key that marks a call and every call made on its behalf, so
// that a TARS framework logs them apart. A dyed request has the iMessageType bit 0x04
// (codec.MessageDyed) and the key in its status map under "STATUS_DYED_KEY" (TarsCpp's
// ServantProxy::checkDye, ServantHandle::processDye).
//
// WithKey puts a key in a context: a call made with that context is dyed. A server that receives
// a dyed request puts its key in the handler's context (FromRequest, then WithKey), so that the
// handler's calls with that context carry it on, as TarsCpp's dyeing switch does for the
// handler's thread. Apply sets the bit and the key on a request.
package dye
