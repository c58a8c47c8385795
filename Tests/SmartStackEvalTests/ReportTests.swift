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
            engine over the best baseline: hit@1 +0.155 (hour-mfu), MRR +0.139 (hour-mfu)

            """
        #expect(Report.table(Self.result) == expected)
    }

    @Test func marginsAreSignedAndNameTheBestOtherRankerWithTheTopChangesAgainstMRU() {
        let result = EvaluationResult(
            moments: 10, counted: 10, coverage: 1,
            rankers: [
                (name: "engine", score: RankerScore(hit1: 0.5, hit3: 0.9, mrr: 0.7, topChanges: 30)),
                (name: "mru", score: RankerScore(hit1: 0.6, hit3: 0.9, mrr: 0.65, topChanges: 40)),
                (name: "markov", score: RankerScore(hit1: 0.55, hit3: 0.9, mrr: 0.69, topChanges: 20)),
            ])
        #expect(
            Report.marginLine(result, of: "engine")
                == "engine over the best baseline: hit@1 -0.100 (mru), MRR +0.010 (markov); top changes 0.75× mru")
    }

    @Test func perUserTableHasOneRowPerUserThenEveryone() {
        var all = Self.result
        all.users = [("sur-A", Self.result), ("a-longer-name", Self.result)]
        let expected = """
            person         counted         engine       hour-mfu           margin
            sur-A             3310  0.600 / 0.750  0.445 / 0.611  +0.155 / +0.139
            a-longer-name     3310  0.600 / 0.750  0.445 / 0.611  +0.155 / +0.139
            all               3310  0.600 / 0.750  0.445 / 0.611  +0.155 / +0.139

            """
        #expect(Report.perUser(all) == expected)
    }

    @Test func jsonCarriesTheMarginAndOnRequestEveryUser() throws {
        var all = Self.result
        all.users = [("sur-A", Self.result)]
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(Report.json(all, perUser: true).utf8)) as? [String: Any])
        let margin = try #require(object["margin"] as? [String: Any])
        #expect(margin["bestHit1"] as? String == "hour-mfu")
        #expect(abs((margin["hit1"] as? Double ?? 0) - 0.1553) < 1e-9)
        let users = try #require(object["users"] as? [String: [String: Any]])
        #expect(users["sur-A"]?["counted"] as? Int == 3_310)
        #expect(!Report.json(all).contains("\"users\""))
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
