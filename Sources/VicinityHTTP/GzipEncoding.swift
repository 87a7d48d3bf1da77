import CZlib
import Foundation

/// gzip (RFC 1952) compression through zlib, for the page's text files: Debian's Leaflet is shipped
/// unminified (about 430 KiB), and a phone on a campus network should not wait for that.
enum GzipEncoding {
    /// The compressed bytes; nil when zlib fails or the result is not smaller. By default at zlib's best
    /// compression: done once per page file, which the server then keeps in memory; answers made per request
    /// ask for `Z_BEST_SPEED`.
    static func compress(_ data: Data, level: Int32 = Z_BEST_COMPRESSION) -> Data? {
        var stream = z_stream()
        // 15 + 16: a 32 KiB window and a gzip header (not zlib's own); 8 is zlib's default memory level
        // (zlib.h, deflateInit2).
        guard deflateInit2_(
            &stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        // deflateBound: the most deflate can produce from this many bytes, the gzip header and trailer
        // included, so that one call finishes.
        let capacity = Int(deflateBound(&stream, uLong(data.count)))
        var output = [UInt8](repeating: 0, count: capacity)
        var input = data
        let status = input.withUnsafeMutableBytes { (inputBuffer: UnsafeMutableRawBufferPointer) -> Int32 in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                stream.next_in = inputBuffer.bindMemory(to: Bytef.self).baseAddress
                stream.avail_in = uInt(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = uInt(capacity)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END, Int(stream.total_out) < data.count else { return nil }
        return Data(output.prefix(Int(stream.total_out)))
    }

    /// Whether an `Accept-Encoding` field (RFC 9110 §12.5.3) takes gzip: named, or `*`, without `q=0`.
    static func isAccepted(by field: String?) -> Bool {
        var gzip: Bool?
        var any: Bool?
        for (coding, quality) in HTTPText.weighted(field) {
            if coding == "gzip" || coding == "x-gzip" { gzip = quality > 0 } else if coding == "*" { any = quality > 0 }
        }
        return gzip ?? any ?? false
    }
}
