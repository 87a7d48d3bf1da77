import Foundation
import Hummingbird

/// The OpenAPI document shipped in this module's resources, served at `/openapi.yaml`.
enum OpenAPIDocument {
    static let mediaType = "application/yaml"

    /// Read once when the router is built, so that a missing document shows at start-up rather than on the
    /// first request. The resource bundle (`vicinity_VicinityHTTP.resources`) must sit beside the executable;
    /// SwiftPM puts it there, and an install must copy it along.
    static func load() -> ByteBuffer? {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let data = try? Data(contentsOf: url)
        else { return nil }
        return ByteBuffer(bytes: data)
    }
}
