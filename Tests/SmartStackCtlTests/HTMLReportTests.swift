import Foundation
import FoundationXML
import SmartStackAnalysis
import Testing

/// The HTML report is well-formed XML, self-contained, with one SVG timeline per stack and one lane per widget.
struct HTMLReportTests {
    /// Collects what the structure tests look at while parsing.
    final class Collector: NSObject, XMLParserDelegate {
        var svgStacks: [String] = []
        var lanes: [String: [String]] = [:]
        var swipes = 0
        var bars = 0
        var scripts = 0
        var externalReferences: [String] = []
        var currentStack: String?

        func parser(
            _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            switch element {
            case "svg":
                currentStack = attributes["data-stack"]
                svgStacks.append(attributes["data-stack"] ?? "?")
            case "g" where attributes["class"] == "lane":
                lanes[currentStack ?? "?", default: []].append(attributes["data-widget"] ?? "?")
            case "path" where attributes["class"] == "swipe": swipes += 1
            case "rect" where attributes["class"] == "on-top": bars += 1
            case "script": scripts += 1
            default: break
            }
            for key in ["src", "href"] {
                if let value = attributes[key], !value.hasPrefix("#") { externalReferences.append(value) }
            }
        }
    }

    static func parse(_ html: String) throws -> Collector {
        let parser = XMLParser(data: Data(html.utf8))
        let collector = Collector()
        parser.delegate = collector
        let parsed = parser.parse()
        #expect(parsed, "not well-formed: \(parser.parserError.map { "\($0)" } ?? "?")")
        return collector
    }

    @Test func structure() throws {
        let report = Analyzer().analyze(AnalyzerTests.records)
        let html = HTMLReport(report: report, source: "tests <&> \"quotes\"").render()
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        let collected = try Self.parse(html)
        #expect(collected.svgStacks == ["home", "work"])
        #expect(collected.lanes["home"] == ["mail", "news", "maps", "suggestion:a/b"])
        #expect(collected.lanes["work"] == ["slack"])
        #expect(collected.swipes == 1)
        #expect(collected.bars == 4)
        #expect(collected.scripts == 0)
        #expect(collected.externalReferences.isEmpty)
        #expect(html.contains("tests &lt;&amp;&gt; &quot;quotes&quot;"))
        #expect(html.contains("<table class=\"summary\">"))
    }

    /// Every widget of a stack keeps its colour in the legend and its bars.
    @Test func coloursAreStablePerWidget() {
        let report = Analyzer().analyze(AnalyzerTests.records)
        let html = HTMLReport(report: report, source: "x").render()
        // Colours go by the sorted widget ids of the whole report: ghost, mail, maps, news, ….
        #expect(html.contains("style=\"background:#f28e2b\"></span>mail"))
        #expect(html.contains("fill=\"#f28e2b\"><title>mail on top"))
        #expect(html.contains("style=\"background:#76b7b2\"></span>news"))
        #expect(HTMLReport.escape("a<b>&\"c'\u{1}") == "a&lt;b&gt;&amp;&quot;c&#39;\u{FFFD}")
    }

    @Test func emptyReportIsStillADocument() throws {
        let html = HTMLReport(report: Analyzer().analyze([]), source: "none").render()
        let collected = try Self.parse(html)
        #expect(collected.svgStacks.isEmpty)
        #expect(html.contains("no smartstackd decision entries"))
    }

    /// A busy stack draws bars merged at the pixel level, not one per stretch.
    @Test func busyTimelinesMergeBars() throws {
        var records: [DecisionRecord] = []
        var previous: [String] = []
        for index in 0..<20_000 {
            let order = index % 2 == 0 ? ["a", "b"] : ["b", "a"]
            records.append(AnalyzerTests.order(Int64(index), "s", order, previous: previous))
            previous = order
        }
        let html = HTMLReport(report: Analyzer().analyze(records), source: "x").render()
        let collected = try Self.parse(html)
        #expect(collected.bars < 2_000)
        #expect(collected.lanes["s"] == ["a", "b"])
    }
}
