import CZlib
import Foundation

/// gzip (RFC 1952) decompression through zlib, for `.csv.gz` and `.geojson.gz` files: published exports are
/// often compressed, and reading them directly spares data staff a step and a copy on disk.
enum Gzip {
    /// A problem that makes the bytes not a gzip stream, in zlib's words.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func decompress(_ compressed: Data) throws(Failure) -> Data {
        var stream = z_stream()
        // 15 + 16: a 32 KiB window and a gzip header (not zlib's own), as zlib.h documents for inflateInit2.
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Failure(description: "zlib could not start")
        }
        defer { inflateEnd(&stream) }
        var output = Data()
        let chunkSize = 1 << 20
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var status: Int32 = Z_OK
        var input = compressed
        let result: Failure? = input.withUnsafeMutableBytes { (inputBuffer: UnsafeMutableRawBufferPointer) -> Failure? in
            stream.next_in = inputBuffer.bindMemory(to: Bytef.self).baseAddress
            stream.avail_in = uInt(inputBuffer.count)
            repeat {
                let produced = chunk.withUnsafeMutableBufferPointer { buffer -> Int in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = uInt(chunkSize)
                    status = inflate(&stream, Z_NO_FLUSH)
                    return chunkSize - Int(stream.avail_out)
                }
                output.append(contentsOf: chunk[0..<produced])
                // A file of several gzip members (as `cat a.gz b.gz` makes) is one stream to gzip(1): go on.
                if status == Z_STREAM_END && stream.avail_in > 0 {
                    status = inflateReset(&stream)
                }
            } while status == Z_OK
            if status == Z_STREAM_END { return nil }
            let message = stream.msg.map { String(cString: $0) } ?? (status == Z_BUF_ERROR ? "the file ends early" : "zlib error \(status)")
            return Failure(description: message)
        }
        if let result { throw result }
        return output
    }
}
