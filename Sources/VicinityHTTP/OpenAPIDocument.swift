import Foundation
import Hummingbird

/// The OpenAPI document shipped in this module's resources, served at `/openapi.yaml`.
enum OpenAPIDocument {
    static let mediaType = "application/yaml"

    /// Read once when the router is built; nil when the resource bundle is missing, which the endpoint
    /// then reports as a logged server error instead of failing every other route.
    static func load() -> ByteBuffer? {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let data = try? Data(contentsOf: url)
        else { return nil }
        return ByteBuffer(bytes: data)
    }
}
