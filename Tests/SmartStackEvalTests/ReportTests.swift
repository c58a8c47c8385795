import Foundation
import SmartStackEval
import Testing

@Suite struct ReportTests {
    static let result = EvaluationResult(
        moments: 3_980, counted: 3_310, coverage: 3_310.0 / 3_980.0,
        rankers: [
            (name: "engine", score: RankerScore(hit1: 0.6, hit3: 0.9, mrr: 0.75, topChanges: 12.5)),
            (name: "hour-mfu", score: RankerScore(hit1: 0.4447, hit3: 0.7048, mrr: 0.61058, topChanges: 4.5619)),
        ])

    @Test func tableHasAHeaderLineAndAlignedRowsInRankerOrder() {
        let expected = """
            moments 3980  counted 3310  coverage 0.832
            ranker    hit@1  hit@3    MRR  top-changes/100
            engine    0.600  0.900  0.750           12.500
            hour-mfu  0.445  0.705  0.611            4.562

            """
        #expect(Report.table(Self.result) == expected)
    }

    @Test func jsonIsOneObjectWithRankersInOrder() throws {
        let text = Report.json(Self.result)
        #expect(
            text.hasPrefix("{\"moments\": 3980, \"counted\": 3310, \"coverage\": 0.831658, \"rankers\": {\"engine\": "))
        #expect(text.hasSuffix("}}\n"))
        #expect(!text.contains("e-") && !text.contains("e+"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["moments"] as? Int == 3_980)
        #expect(object["counted"] as? Int == 3_310)
        let rankers = try #require(object["rankers"] as? [String: [String: Double]])
        #expect(rankers["engine"] == ["hit1": 0.6, "hit3": 0.9, "mrr": 0.75, "topChanges": 12.5])
        #expect(rankers["hour-mfu"]?["topChanges"] == 4.5619)
        let engine = try #require(text.range(of: "\"engine\""))
        let hourMFU = try #require(text.range(of: "\"hour-mfu\""))
        #expect(engine.lowerBound < hourMFU.lowerBound)
    }

    @Test func jsonEscapesNamesAndWritesTinyNumbersPlainly() throws {
        let result = EvaluationResult(
            moments: 0, counted: 0, coverage: 0,
            rankers: [(name: "a \"quoted\"\\name", score: RankerScore(hit1: 1e-7, hit3: 0, mrr: 0, topChanges: 0))])
        let text = Report.json(result)
        #expect(text.contains("\"hit1\": 0.000000"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let rankers = try #require(object["rankers"] as? [String: Any])
        #expect(rankers.keys.first == "a \"quoted\"\\name")
    }
}
