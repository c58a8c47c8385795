import Foundation
import SmartStackCore
import SmartStackEval
import Testing

/// Fitting the prior offline: the mean of the weights the engine learns per person, and scores under priors
/// fitted without the person scored.
@Suite struct PriorFitTests {
    /// Two people whose habits differ: one goes back to the app before last, the other resumes the last app.
    static func log() throws -> UsageLog {
        var rows = ["# hand-made", "user\ttime\tapp\tevent"]
        var second = 0
        func row(_ user: String, _ app: String, _ event: String) {
            second += 7
            let minutes = second / 60
            rows.append(
                "\(user)\t2024-03-04T\(String(format: "%02d:%02d:%02d", 9 + minutes / 60, minutes % 60, second % 60))Z\t\(app)\t\(event)"
            )
        }
        for round in 0..<60 {
            let apps = ["A", "B", "C"]
            row("switcher", apps[round % 3], "open")
            row("switcher", "-", "home")
            row("switcher", apps[(round + 2) % 3], "open")
        }
        second = 0
        for round in 0..<60 {
            row("resumer", ["A", "B"][round % 2], "open")
            row("resumer", "-", "home")
            row("resumer", ["A", "B"][round % 2], "open")
        }
        return try UsageLog.parse(rows.joined(separator: "\n"), file: "hand.tsv")
    }

    @Test func aPriorIsTheMeanOfWhatTheEngineLearnsPerPerson() throws {
        let people = PriorFit.people(of: [try Self.log()])
        #expect(people.map(\.name) == ["switcher", "resumer"])
        let each = people.map { PriorFit.fit([$0], id: "one", rounds: 1) }
        let both = PriorFit.fit(people, id: "both", rounds: 1)
        #expect(both.id == "both")
        for (index, named) in both.namedWeights.enumerated() {
            let mean = (each[0].namedWeights[index].weight + each[1].namedWeights[index].weight) / 2
            #expect(abs(named.weight - mean) < 1e-12, "\(named.name)")
        }
        // The two people learned different things: the prior is not either one's.
        #expect(each[0] != each[1])
        let source = PriorFit.source(of: both, fittedOn: "hand.tsv")
        #expect(source.contains("id: \"both\""))
        #expect(source.contains("(\"mostRecent\", "))
    }

    @Test func crossFittingScoresEveryPersonUnderAPriorFittedWithoutThem() throws {
        let people = PriorFit.people(of: [try Self.log()])
        let result = PriorFit.crossFit(people)
        #expect(result.users.map(\.name) == ["switcher", "resumer"])
        #expect(result.counted == result.users.reduce(0) { $0 + $1.result.counted })
        #expect(result.rankers.map(\.name) == ["engine", "mru", "mfu", "frecency", "hour-mfu", "markov"])
        // Alone, each person's result is that of an evaluation with the prior fitted on the other one.
        let prior = PriorFit.fit([people[1]], id: "without-switcher")
        let alone = Evaluation.run(
            logs: [UsageLog(users: [(name: "switcher", events: people[0].events)])],
            rankers: [EngineRanker.factory(prior: prior)] + Baselines.baselines)
        #expect(result.users[0].result.score(of: "engine") == alone.score(of: "engine"))
    }
}
