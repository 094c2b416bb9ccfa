"""
Runs a published E-Divisive implementation on series given as JSON on stdin and prints what it
found as JSON, for test/unit/edivisive-references.test.ts (which runs the TypeScript detector on
the same series and compares). Each implementation runs in its own virtual environment under
.venv/references/ (scripts/setup.sh --test installs them; their numpy pins conflict).

stdin:  {"implementation": "signal-processing-algorithms" | "apache-otava",
         "series": [[...], ...], "significance": 0.05, "permutations": 199, "seed": 7}
stdout: [{"changePoints": [{"index", "statistic", "pValue"}...] (in the order found),
          "bestSplit": {"index", "statistic"}, "statistics": [...] (signal-processing-algorithms only),
          "rejected": {"index", "pValue"} | null (signal-processing-algorithms only)}, ...]
"""
import json
import sys

import numpy as np


def signal_processing_algorithms(series, significance, permutations, seed):
    from signal_processing_algorithms.energy_statistics import energy_statistics as es

    values = np.asarray(series, dtype=np.float64)
    # The public function, as MongoDB's CI calls it: where the change points are.
    np.random.seed(seed)
    found = es.e_divisive(values, pvalue=significance, permutations=permutations)

    distances = es._get_distance_matrix(es._get_valid_input(values))
    statistics = es._calculate_t_stats(distances)

    def exceedances(change_points):
        # _get_next_significant_change_point returns the candidate iff #exceedances / (P + 1) <= pvalue.
        # With the same seed each call draws the same permutations, so the smallest count c for which
        # it returns the candidate at pvalue = c / (P + 1) is the count its own test made.
        lo, hi = 0, permutations
        while lo < hi:
            mid = (lo + hi) // 2
            np.random.seed(seed + 1000 + len(change_points))
            if es._get_next_significant_change_point(distances, list(change_points), {}, mid / (permutations + 1), permutations) is None:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def candidate(change_points):
        np.random.seed(seed)
        return es._get_next_significant_change_point(distances, list(change_points), {}, 1.0, permutations)

    def statistic_at(change_points, index):
        bounds = [0] + sorted(change_points) + [len(values)]
        for a, b in zip(bounds, bounds[1:]):
            if a <= index < b:
                return float(es._calculate_t_stats(distances[a:b, a:b])[index - a])
        raise ValueError(index)

    points = []
    for k, index in enumerate(found):
        c = exceedances(found[:k])
        points.append({"index": int(index), "statistic": statistic_at(found[:k], index), "pValue": c / (permutations + 1)})
    rejected_index = candidate(found)
    rejected = None
    if rejected_index is not None:
        rejected = {"index": int(rejected_index), "pValue": exceedances(found) / (permutations + 1)}
    best = int(np.argmax(statistics))
    return {
        "changePoints": points,
        "bestSplit": {"index": best, "statistic": float(statistics[best])},
        "statistics": [float(s) for s in statistics],
        "rejected": rejected,
    }


def apache_otava(series, significance, permutations, seed):
    # compute_change_points_orig(series, max_pvalue, seed) with the number of permutations as a
    # parameter (it fixes 100): the same two objects it builds.
    from otava.change_point_divisive.calculator import PairDistanceCalculator
    from otava.change_point_divisive.detector import ChangePointDetector
    from otava.change_point_divisive.significance_test import PermutationsSignificanceTester

    values = np.asarray(series, dtype=np.float64)
    tester = PermutationsSignificanceTester(max_pvalue=significance, permutations=permutations, calculator=PairDistanceCalculator, seed=seed)
    detector = ChangePointDetector(significance_tester=tester, calculator=PairDistanceCalculator)
    found = detector.get_change_points(values)
    # get_change_points keeps them sorted by index; the order found is by decreasing statistic
    # within the splits, which the comparison does not need.
    best = PairDistanceCalculator(values).get_candidate_change_point(slice(0, len(values)))
    return {
        "changePoints": [{"index": int(c.index), "statistic": float(c.qhat), "pValue": float(c.stats.pvalue)} for c in found],
        "bestSplit": {"index": int(best.index), "statistic": float(best.qhat)},
        "statistics": None,
        "rejected": None,
    }


def main():
    request = json.load(sys.stdin)
    run = {"signal-processing-algorithms": signal_processing_algorithms, "apache-otava": apache_otava}[request["implementation"]]
    out = [run(s, request["significance"], request["permutations"], request["seed"]) for s in request["series"]]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
