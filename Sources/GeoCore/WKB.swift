
/// Well-Known Binary for the one geometry type stored as a blob: MULTIPOLYGON XY, little-endian.
///
/// Footprints and boundaries travel to and from every database as WKB (SpatiaLite's `GeomFromWKB` / `AsBinary`,
/// PostGIS's `ST_GeomFromWKB` / `ST_AsBinary`) because WKB carries the exact IEEE doubles: what goes in comes
/// back bit for bit, which keeps re-imports idempotent and both stores' answers identical.
public enum WKB {
    /// Bytes that are not a polygon or multipolygon this codec reads.
    public struct DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    private static let littleEndian: UInt8 = 1
    private static let polygonType: UInt32 = 3
    private static let multiPolygonType: UInt32 = 6

    public static func encode(_ multi: MultiPolygon) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.append(littleEndian)
        append(multiPolygonType, to: &bytes)
        append(UInt32(multi.polygons.count), to: &bytes)
        for polygon in multi.polygons {
            bytes.append(littleEndian)
            append(polygonType, to: &bytes)
            append(UInt32(polygon.rings.count), to: &bytes)
            for ring in polygon.rings {
                append(UInt32(ring.count), to: &bytes)
                for point in ring {
                    append(point.longitude.bitPattern, to: &bytes)
                    append(point.latitude.bitPattern, to: &bytes)
                }
            }
        }
        return bytes
    }

    public static func decodeMultiPolygon(_ bytes: [UInt8]) throws(DecodingError) -> MultiPolygon {
        var reader = Reader(bytes: bytes)
        do {
            let type = try reader.header()
            let polygonBlobs: Int
            switch type {
            case multiPolygonType: polygonBlobs = Int(try reader.uint32())
            case polygonType: polygonBlobs = 1; reader.offset = 0
            default: throw DecodingError(description: "unexpected WKB geometry type \(type)")
            }
            var polygons: [Polygon] = []
            for _ in 0..<polygonBlobs {
                guard try reader.header() == polygonType else { throw DecodingError(description: "WKB part is not a polygon") }
                var rings: [[Coordinate]] = []
                for _ in 0..<Int(try reader.uint32()) {
                    var ring: [Coordinate] = []
                    for _ in 0..<Int(try reader.uint32()) {
                        let longitude = Double(bitPattern: try reader.uint64())
                        let latitude = Double(bitPattern: try reader.uint64())
                        ring.append(try Coordinate(latitude: latitude, longitude: longitude))
                    }
                    rings.append(ring)
                }
                guard let exterior = rings.first else { throw DecodingError(description: "WKB polygon without rings") }
                polygons.append(try Polygon(exterior: exterior, holes: Array(rings.dropFirst())))
            }
            return try MultiPolygon(polygons)
        } catch let error as DecodingError {
            throw error
        } catch {
            throw DecodingError(description: "not a valid polygon: \(error)")
        }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0
        var bigEndian = false

        mutating func header() throws(DecodingError) -> UInt32 {
            guard offset < bytes.count else { throw DecodingError(description: "truncated WKB") }
            bigEndian = bytes[offset] == 0
            offset += 1
            return try uint32()
        }

        mutating func uint32() throws(DecodingError) -> UInt32 { try read() }
        mutating func uint64() throws(DecodingError) -> UInt64 { try read() }

        private mutating func read<T: FixedWidthInteger>() throws(DecodingError) -> T {
            let size = MemoryLayout<T>.size
            guard offset + size <= bytes.count else { throw DecodingError(description: "truncated WKB") }
            var value: T = 0
            for index in 0..<size { value |= T(bytes[offset + index]) << (8 * index) }
            offset += size
            return bigEndian ? value.byteSwapped : value
        }
    }
}
