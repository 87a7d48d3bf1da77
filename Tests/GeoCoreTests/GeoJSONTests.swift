import Foundation
import Testing
@testable import GeoCore
import GeoTestSupport

@Suite("GeoJSON wire types")
struct GeoJSONTests {
    private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    private func error(_ json: String) -> GeoJSONError? {
        do { _ = try decode(GeoJSONFeatureCollection.self, json); return nil } catch { return GeoJSONError(error) }
    }

    @Test("positions are read as [longitude, latitude]")
    func positionOrder() throws {
        let geometry = try decode(GeoJSONGeometry.self, #"{"type":"Point","coordinates":[-118.114, 33.7825]}"#)
        #expect(geometry == .point(coordinate(33.7825, -118.114)))
        let encoded = String(decoding: try JSONEncoder().encode(geometry), as: UTF8.self)
        #expect(encoded.contains("[-118.114,33.7825]"))
    }

    @Test("an unclosed ring is refused with the path to its coordinates")
    func unclosedRing() throws {
        let problem = try #require(error("""
            {"type":"FeatureCollection","features":[
              {"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[0,0]}},
              {"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[0,1],[1,1],[1,0]]]}}]}
            """))
        #expect(problem.path == "features[1].geometry.coordinates")
        #expect(problem.message.contains("not closed"))
        #expect(problem.featureIndex == 1)
    }

    @Test("a position with the wrong number of values is refused where it is")
    func badPositionCount() throws {
        let problem = try #require(error("""
            {"type":"FeatureCollection","features":[{"type":"Feature","properties":null,"geometry":{"type":"Point","coordinates":[1]}}]}
            """))
        #expect(problem.path == "features[0].geometry.coordinates")
        #expect(problem.message.contains("2 or 3 numbers"))
    }

    @Test("values outside degree ranges are refused, naming the value")
    func outOfRange() throws {
        let problem = try #require(error("""
            {"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[613053.118, 1530567.968]}}]}
            """))
        #expect(problem.path == "features[0].geometry.coordinates")
        #expect(problem.message.contains("1530567.968"))
        #expect(problem.coordinateError == .latitudeOutOfRange(1530567.968))
    }

    @Test("unknown geometry types and a foreign CRS are refused")
    func unknownTypeAndCRS() throws {
        let unknown = try #require(error("""
            {"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"Circle","coordinates":[0,0]}}]}
            """))
        #expect(unknown.message.contains("unknown geometry type"))
        let crs = try #require(error("""
            {"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::32647"}},"features":[]}
            """))
        #expect(crs.message.contains("EPSG::32647"))
    }

    @Test("a document read feature by feature reports each bad feature and keeps the good ones")
    func lenientDocument() throws {
        let document = try decode(GeoJSONDocument.self, """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":7,"properties":{"name":"a"},"geometry":{"type":"Point","coordinates":[100.49, 13.74]}},
              {"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[200, 13]}},
              {"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[0,1],[0,0]]]}},
              {"type":"Feature","id":"x","properties":{},"geometry":{"type":"Point","coordinates":[0, 0]}}]}
            """)
        #expect(document.features.count == 4)
        #expect(try document.features[0].get().id == "7")
        #expect(try document.features[3].get().id == "x")
        guard case .failure(let second) = document.features[1], case .failure(let third) = document.features[2] else {
            Issue.record("features 1 and 2 should have failed")
            return
        }
        #expect(second.featureIndex == 1 && second.message.contains("200"))
        #expect(third.featureIndex == 2 && third.message.contains("at least 4"))
    }

    @Test("polygons with holes and multipolygons round-trip through JSON unchanged")
    func roundTrip() throws {
        let json = """
            {"type":"MultiPolygon","coordinates":[[[[0,0],[10,0],[10,10],[0,10],[0,0]],[[4,4],[6,4],[6,6],[4,6],[4,4]]],[[[20,20],[21,20],[21,21],[20,20]]]]}
            """
        let geometry = try decode(GeoJSONGeometry.self, json)
        let again = try JSONDecoder().decode(GeoJSONGeometry.self, from: JSONEncoder().encode(geometry))
        #expect(again == geometry)
        guard case .multiPolygon(let multi) = geometry else { Issue.record("not a multipolygon"); return }
        #expect(multi.polygons.count == 2 && multi.polygons[0].holes.count == 1)
    }

    @Test("every geometry type and features with and without id or geometry are written as RFC 7946 and read back")
    func writtenAsJSONValue() throws {
        let collection = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"a","properties":{"name":"Hall of Science"},"geometry":{"type":"Point","coordinates":[-118.112526,33.779842]}},
              {"type":"Feature","properties":{},"geometry":null},
              {"type":"Feature","id":"c","properties":{"n":1},"geometry":{"type":"GeometryCollection","geometries":[
                {"type":"MultiPoint","coordinates":[[179.9,0],[-179.9,0]]},
                {"type":"LineString","coordinates":[[0,89.5],[180,89.5]]},
                {"type":"MultiLineString","coordinates":[[[0,0],[1,1]],[[2,2],[3,3]]]},
                {"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}]}}]}
            """
        let decoded = try decode(GeoJSONFeatureCollection.self, collection)
        let written = decoded.jsonValue.jsonBytes
        #expect(try JSONDecoder().decode(GeoJSONFeatureCollection.self, from: Data(written)) == decoded)
        let text = String(decoding: written, as: UTF8.self)
        #expect(text.hasPrefix(#"{"features":[{"geometry":{"coordinates":[-118.112526,33.779842],"type":"Point"},"id":"a","#))
        #expect(text.contains(#"{"geometry":null,"properties":{},"type":"Feature"}"#), "no id member when there is none")
    }
}
