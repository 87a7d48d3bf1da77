import HTTPTypes
import Hummingbird

/// `Strict-Transport-Security` on every answer of a TLS listener (RFC 6797): a browser that has had one answer
/// over HTTPS goes to this host over HTTPS only, for two years, even when a link or a typed address says
/// `http://`, so that no one on the path can strip TLS from its later visits.
///
/// Only over TLS: browsers ignore the field over plain HTTP (RFC 6797 §8.1), and a plain listener may sit behind a
/// proxy that terminates TLS and sets the field itself. Neither `includeSubDomains` nor `preload`: the service
/// is often one host of a campus domain whose other hosts it cannot speak for.
struct StrictTransportSecurityMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Two years, the value hstspreload.org recommends (https://hstspreload.org/, "Deployment Recommendations":
    /// `max-age=63072000`); its minimum for preloading is one year.
    static var value: String { "max-age=63072000" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.strictTransportSecurity] = Self.value
        return response
    }
}
