"""The fixed corpus of the faithfulness figure: answers written from real query results.

Each case is a question, the SQL an analyst would run on the sample data, and a
writer that words the answer the way a careful analyst (or Claude) does, from the
real rows: leaders and runners-up, totals, shares, averages, negatives written as
"early", dates, hours, months by name, rounded and hedged figures. Every figure is
a :class:`Fig` holding the true value and how it is written; each case is written
twice, with two styles per figure (``58,665`` / ``58.7k``), so the corpus covers
the formats people use. :func:`alter` rewrites one figure from a value changed by
a factor, in the same style: the answers whose figures were altered.

The values come from running the SQL through the worker's own sandbox, and the
tool-result texts are exactly what the model would have been shown.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.sql.query_result import QueryResult

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
VARIANTS = 2


@dataclass(frozen=True)
class Fig:
    """A figure of an answer: its true value and its style in each variant."""

    value: float
    styles: tuple[str, ...]
    alterable: bool = True

    def style(self, variant: int) -> str:
        return self.styles[variant % len(self.styles)]


Part = str | Fig


@dataclass
class Rows:
    """A query result as the writer reads it: rows as dicts, the row count, the summary."""

    result: QueryResult
    rows: list[dict] = field(init=False)

    def __post_init__(self) -> None:
        self.rows = [dict(zip(self.result.columns, row, strict=True)) for row in self.result.rows]

    def __getitem__(self, index: int) -> dict:
        return self.rows[index]

    @property
    def total(self) -> int:
        return self.result.total_rows

    def summary(self, column: str, stat: str) -> float:
        item = next(s for s in self.result.summary or [] if s.column == column)
        return float(getattr(item, stat))


@dataclass(frozen=True)
class Case:
    question: str
    sql: tuple[str, ...]
    write: Callable[..., list[Part]]


def f(value: float, *styles: str, alterable: bool = True) -> Fig:
    return Fig(float(value), styles or ("int",), alterable)


def fmt(value: float, style: str) -> str:
    """``value`` written in ``style`` (see the table below)."""
    if style == "int":
        return f"{round(value):,}"
    if style == "plain":
        return f"{round(value)}"
    if style.startswith("dec"):
        return f"{value:,.{int(style[3:])}f}"
    if style == "k1":
        return f"{value / 1e3:.1f}k"
    if style == "k0":
        return f"{value / 1e3:.0f}k"
    if style == "m1":
        return f"{value / 1e6:.1f}M"
    if style == "m2w":
        return f"{value / 1e6:.2f} million"
    if style == "pct1":  # a fraction, as a percentage
        return f"{value * 100:.1f}%"
    if style == "pct0":
        return f"{value * 100:.0f}%"
    if style == "pctv1":  # already in percent
        return f"{value:.1f}%"
    if style == "pctv0":
        return f"{value:.0f} percent"
    if style in ("abs0", "abs1"):  # a negative value as a magnitude ("9.5 minutes early")
        return f"{abs(value):.{int(style[3:])}f}"
    if style == "about":  # two significant digits
        return "about " + f"{_round_sig(value, 2):,.0f}"
    if style == "over":  # floored to its leading digit
        return "over " + f"{_floor_sig(value):,.0f}"
    if style == "usd":
        return f"${value:,.2f}"
    raise ValueError(f"unknown style {style!r}")


def _round_sig(value: float, digits: int) -> float:
    if value == 0:
        return 0.0
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def _floor_sig(value: float) -> float:
    step = 10 ** math.floor(math.log10(abs(value))) if value else 1
    return math.floor(value / step) * step


def render(parts: list[Part], variant: int, altered: tuple[int, float] | None = None) -> tuple[
        str, list[tuple[int, int]]]:
    """The answer text of ``variant``, and the span of every figure in it. With
    ``altered = (index, factor)``, figure ``index`` (among the Figs) is written from its
    value times ``factor``."""
    text, spans, index = "", [], 0
    for part in parts:
        if isinstance(part, str):
            text += part
            continue
        value = part.value * altered[1] if altered and altered[0] == index else part.value
        written = fmt(value, part.style(variant))
        spans.append((len(text), len(text) + len(written)))
        text += written
        index += 1
    return text, spans


def month(number: int) -> str:
    return MONTHS[int(number) - 1]


CASES: list[Case] = [
    Case("How many flights left New York in 2013?",
         ("SELECT count(*) AS flights FROM flights",),
         lambda r: ["There were ", f(r[0]["flights"], "int", "k1"), " departures from New York's "
                    "three airports in 2013."]),
    Case("Which carrier flew the most flights?",
         ("SELECT carrier, count(*) AS flights FROM flights GROUP BY 1 ORDER BY 2 DESC",),
         lambda r: [f"{r[0]['carrier']} flew the most flights (", f(r[0]["flights"], "int", "k1"),
                    f"), ahead of {r[1]['carrier']} with ", f(r[1]["flights"], "int", "about"),
                    f" and {r[2]['carrier']} with ", f(r[2]["flights"], "k1", "int"),
                    ". {{chart:0}} The ", f(r.total, "plain", alterable=False),
                    " carriers are shown in the chart."]),
    Case("What is the average departure delay?",
         ("SELECT round(avg(dep_delay), 2) AS avg_delay, count(dep_delay) AS flights, "
          "count(*) - count(dep_delay) AS missing FROM flights",),
         lambda r: ["Flights left ", f(r[0]["avg_delay"], "dec1", "dec2"), " minutes late on "
                    "average, over the ", f(r[0]["flights"], "int", "k1"), " flights with a "
                    "recorded departure; ", f(r[0]["missing"], "int", "int"), " flights have "
                    "none (most were cancelled)."]),
    Case("What share of flights arrived on time?",
         ("SELECT count(*) FILTER (WHERE arr_delay <= 0) / count(arr_delay) AS on_time_share, "
          "count(*) FILTER (WHERE arr_delay <= 0) AS on_time, count(arr_delay) AS flights "
          "FROM flights",),
         lambda r: [f(r[0]["on_time_share"], "pct1", "pct0"), " of flights arrived on time or "
                    "early: ", f(r[0]["on_time"], "int", "k1"), " of ",
                    f(r[0]["flights"], "int", "int"), "."]),
    Case("How did the number of flights change over the year?",
         ("SELECT month, count(*) AS flights FROM flights GROUP BY 1 ORDER BY 1",),
         lambda r: (lambda hi, lo: [
             f"Traffic peaked in {month(hi['month'])} with ", f(hi["flights"], "int", "k1"),
             f" flights and was lowest in {month(lo['month'])} with ",
             f(lo["flights"], "int", "about"), ". {{chart:0}}"])(
             max(r.rows, key=lambda x: x["flights"]), min(r.rows, key=lambda x: x["flights"]))),
    Case("Which airline has the best and worst average arrival delay?",
         ("SELECT a.name, round(avg(f.arr_delay), 2) AS avg_arr_delay FROM flights f "
          "JOIN airlines a USING (carrier) GROUP BY 1 ORDER BY 2",),
         lambda r: [f"{r[0]['name']} was best, arriving ", f(r[0]["avg_arr_delay"], "abs1", "dec2"),
                    f" minutes early on average; {r[-1]['name']} was worst at ",
                    f(r[-1]["avg_arr_delay"], "dec1", "dec2"), " minutes late."]),
    Case("What was the busiest day of 2013?",
         ("SELECT make_date(year, month, day) AS date, count(*) AS flights FROM flights "
          "GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 3",),
         lambda r: [f"The busiest day was {r[0]['date'].isoformat()}, with ",
                    f(r[0]["flights"], "int", "plain"), f" flights, followed by "
                    f"{r[1]['date']:%B} {r[1]['date'].day} (", f(r[1]["flights"], "int", "int"),
                    ")."]),
    Case("How many destinations are served from New York?",
         ("SELECT count(DISTINCT dest) AS destinations, count(DISTINCT origin) AS origins "
          "FROM flights",),
         lambda r: ["Flights from the ", f(r[0]["origins"], "plain", alterable=False),
                    " New York airports reach ", f(r[0]["destinations"], "plain", "int"),
                    " destinations."]),
    Case("What is the longest route?",
         ("SELECT origin, dest, max(distance) AS miles, count(*) AS flights FROM flights "
          "GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 1",),
         lambda r: [f"The longest route is {r[0]['origin']} to {r[0]['dest']} at ",
                    f(r[0]["miles"], "int", "plain"), " miles, flown ",
                    f(r[0]["flights"], "int", "int"), " times in 2013."]),
    Case("Which manufacturers built the planes in the fleet?",
         ("SELECT manufacturer, count(*) AS planes FROM planes GROUP BY 1 ORDER BY 2 DESC",),
         lambda r: ["The fleet of ", f(r.summary("planes", "total"), "int", "k1"), " planes "
                    "comes from ", f(r.total, "plain", "int"), f" manufacturers; {r[0]['manufacturer'].title()} "
                    "alone built ", f(r[0]["planes"], "int", "about"), ", then "
                    f"{r[1]['manufacturer'].title()} with ", f(r[1]["planes"], "int", "int"),
                    ". {{chart:0}}"]),
    Case("How warm was it at JFK through the year?",
         ("SELECT month, round(avg(temp), 1) AS avg_temp FROM weather WHERE origin = 'JFK' "
          "GROUP BY 1 ORDER BY 1",),
         lambda r: (lambda lo, hi: [
             "At JFK the monthly average temperature ran from ", f(lo["avg_temp"], "dec1", "plain"),
             f"°F in {month(lo['month'])} to ", f(hi["avg_temp"], "dec1", "plain"),
             f"°F in {month(hi['month'])}. {{{{chart:0}}}}"])(
             min(r.rows, key=lambda x: x["avg_temp"]), max(r.rows, key=lambda x: x["avg_temp"]))),
    Case("How many miles did each carrier fly?",
         ("SELECT carrier, sum(distance) AS miles FROM flights GROUP BY 1 ORDER BY 2 DESC",),
         lambda r: [f"{r[0]['carrier']} flew the most miles, ", f(r[0]["miles"], "m1", "m2w"),
                    f", then {r[1]['carrier']} with ", f(r[1]["miles"], "m1", "int"),
                    f"; {r[-1]['carrier']} flew just ", f(r[-1]["miles"], "int", "k1"), "."]),
    Case("How many flights were cancelled?",
         ("SELECT count(*) FILTER (WHERE dep_time IS NULL) AS cancelled, "
          "count(*) FILTER (WHERE dep_time IS NULL) / count(*) AS share FROM flights",),
         lambda r: [f(r[0]["cancelled"], "int", "k1"), " flights (", f(r[0]["share"], "pct1", "pct1"),
                    ") never departed, which the data records as a missing departure time."]),
    Case("How many flights were there per day?",
         ("SELECT make_date(year, month, day) AS date, count(*) AS flights FROM flights "
          "GROUP BY 1 ORDER BY 1",),
         lambda r: ["Over the ", f(r.total, "plain", alterable=False), " days of 2013 there were ",
                    f(r.summary("flights", "avg"), "dec1", "plain"), " flights a day on average, "
                    "between ", f(r.summary("flights", "min"), "int", "int"), " and ",
                    f(r.summary("flights", "max"), "int", "int"), " (",
                    f(r.summary("flights", "total"), "int", "over"), " in all)."]),
    Case("At what hour are departure delays worst?",
         ("SELECT hour, round(avg(dep_delay), 2) AS avg_delay, count(*) AS flights FROM flights "
          "WHERE hour BETWEEN 5 AND 23 GROUP BY 1 ORDER BY 2 DESC",),
         lambda r: [f"Delays are worst for departures at {_clock(r[0]['hour'])}, averaging ",
                    f(r[0]["avg_delay"], "dec1", "dec2"), f" minutes, and mildest at "
                    f"{_clock(r[-1]['hour'])} (", f(r[-1]["avg_delay"], "dec1", "dec1"),
                    " minutes)."]),
    Case("What is the strongest wind recorded?",
         ("SELECT origin, max(wind_speed) AS max_wind, round(avg(wind_speed), 2) AS avg_wind "
          "FROM weather GROUP BY 1 ORDER BY 2 DESC",),
         lambda r: [f"The strongest wind was recorded at {r[0]['origin']}: ",
                    f(r[0]["max_wind"], "dec1", "plain"), " mph, an outlier against its average "
                    "of ", f(r[0]["avg_wind"], "dec1", "dec2"), " mph."]),
    Case("How big are the planes?",
         ("SELECT max(seats) AS max_seats, round(avg(seats), 1) AS avg_seats, "
          "count(*) AS planes FROM planes",),
         lambda r: ["The largest plane has ", f(r[0]["max_seats"], "plain", "int"), " seats; "
                    "the ", f(r[0]["planes"], "int", "k1"), " planes average ",
                    f(r[0]["avg_seats"], "dec1", "plain"), " seats."]),
    Case("How busy is each New York airport?",
         ("SELECT origin, count(*) AS flights, count(*) / sum(count(*)) OVER () AS share "
          "FROM flights GROUP BY 1 ORDER BY 2 DESC",),
         lambda r: [f"{r[0]['origin']} is the busiest with ", f(r[0]["flights"], "int", "k1"),
                    " departures (", f(r[0]["share"], "pct1", "pct0"), f"), then {r[1]['origin']} ",
                    f(r[1]["flights"], "int", "k1"), f" and {r[2]['origin']} ",
                    f(r[2]["flights"], "int", "k0"), " ({{chart:0}})."]),
    Case("What are the top 5 destinations?",
         ("SELECT dest, count(*) AS flights FROM flights GROUP BY 1 ORDER BY 2 DESC LIMIT 5",),
         lambda r: ["The top 5 destinations were:\n"] + [
             x for i, row in enumerate(r.rows)
             for x in (f"{i + 1}. {row['dest']}: ", f(row["flights"], "int", "k1"), "\n")]),
    Case("How did traffic change from January to March?",
         ("SELECT round(100.0 * (count(*) FILTER (WHERE month = 3) - count(*) FILTER "
          "(WHERE month = 1)) / count(*) FILTER (WHERE month = 1), 2) AS growth_pct, "
          "count(*) FILTER (WHERE month = 1) AS january, count(*) FILTER (WHERE month = 3) "
          "AS march FROM flights",),
         lambda r: ["Flights grew ", f(r[0]["growth_pct"], "pctv1", "pctv0"), " from January (",
                    f(r[0]["january"], "int", "k1"), ") to March (", f(r[0]["march"], "int", "k1"),
                    ")."]),
    Case("What is the median departure delay?",
         ("SELECT median(dep_delay) AS median_delay, round(avg(dep_delay), 1) AS mean_delay "
          "FROM flights",),
         lambda r: ["The median flight left ", f(r[0]["median_delay"], "abs1", "abs0"),
                    " minutes early, although the mean delay is ", f(r[0]["mean_delay"], "dec1"),
                    " minutes: a few long delays pull the average up."]),
    Case("How long is the average flight?",
         ("SELECT round(avg(distance), 1) AS avg_miles, round(avg(air_time), 1) AS avg_minutes "
          "FROM flights",),
         lambda r: ["The average flight covers ", f(r[0]["avg_miles"], "int", "dec1"),
                    " miles in ", f(r[0]["avg_minutes"], "int", "dec1"), " minutes in the air."]),
    Case("How many planes have no recorded year of manufacture?",
         ("SELECT count(*) FILTER (WHERE year IS NULL) AS unknown, min(year) AS oldest, "
          "max(year) AS newest FROM planes",),
         lambda r: [f(r[0]["unknown"], "plain", "int"), " planes have no year of manufacture; "
                    f"the others were built between {r[0]['oldest']} and {r[0]['newest']}."]),
    Case("How many flights left late?",
         ("SELECT count(*) FILTER (WHERE dep_delay > 0) AS late, "
          "count(*) FILTER (WHERE dep_delay > 0) / count(dep_delay) AS share FROM flights",),
         lambda r: [f(r[0]["late"], "int", "k1"), " flights left late (",
                    f(r[0]["share"], "pct1", "pct0"), " of those with a departure time)."]),
    Case("How many flights flew more than 1,000 miles?",
         ("SELECT count(*) AS long_flights, count(*) / (SELECT count(*) FROM flights) AS share "
          "FROM flights WHERE distance > 1000",),
         lambda r: [f(r[0]["long_flights"], "int", "k1"), " flights, or ",
                    f(r[0]["share"], "pct1", "pct0"), " of all, flew more than 1,000 miles."]),
    Case("What is the average visibility at each airport?",
         ("SELECT origin, round(avg(visib), 2) AS avg_visib, round(avg(humid), 1) AS avg_humid "
          "FROM weather GROUP BY 1 ORDER BY 1",),
         lambda r: [f"Average visibility was {r[0]['origin']} ", f(r[0]["avg_visib"], "dec2", "dec1"),
                    f" miles, {r[1]['origin']} ", f(r[1]["avg_visib"], "dec2", "dec1"),
                    f" and {r[2]['origin']} ", f(r[2]["avg_visib"], "dec2", "dec1"),
                    "; humidity averaged ", f(r[0]["avg_humid"], "pctv1", "dec1"),
                    f" at {r[0]['origin']}."]),
    Case("Which planes flew the most?",
         ("SELECT tailnum, count(*) AS flights, sum(distance) AS miles FROM flights "
          "WHERE tailnum IS NOT NULL GROUP BY 1 ORDER BY 2 DESC",),
         lambda r: [f"{r[0]['tailnum']} flew the most: ", f(r[0]["flights"], "int", "plain"),
                    " flights and ", f(r[0]["miles"], "int", "k1"), " miles. In all ",
                    f(r.total, "int", "about"), " planes flew ", f(r.summary("flights", "total"),
                                                                   "int", "k1"),
                    " flights with a known tail number."]),
    Case("Which carrier is most punctual at each airport?",
         ("SELECT origin, carrier, round(avg(arr_delay), 2) AS avg_arr_delay, count(*) AS flights "
          "FROM flights GROUP BY 1, 2 HAVING count(*) > 1000 "
          "QUALIFY row_number() OVER (PARTITION BY origin ORDER BY avg(arr_delay)) = 1 "
          "ORDER BY 1",),
         lambda r: [x for row in r.rows for x in (
             f"At {row['origin']}, {row['carrier']} averaged ",
             f(row["avg_arr_delay"], "dec1", "dec2"), " minutes over ",
             f(row["flights"], "int", "k1"), " flights. ")] + [
             "(Carriers with more than 1,000 flights at the airport.)"]),
    Case("How much did the average departure delay vary by month?",
         ("SELECT month, round(avg(dep_delay), 2) AS avg_delay FROM flights GROUP BY 1 ORDER BY 1",),
         lambda r: (lambda hi, lo: [
             f"Departure delays were longest in {month(hi['month'])} (",
             f(hi["avg_delay"], "dec1", "dec2"), f" minutes) and shortest in "
             f"{month(lo['month'])} (", f(lo["avg_delay"], "dec1", "plain"),
             " minutes). {{chart:0}}"])(
             max(r.rows, key=lambda x: x["avg_delay"]), min(r.rows, key=lambda x: x["avg_delay"]))),
    Case("How many airports are in each time zone?",
         ("SELECT tzone, count(*) AS airports, sum(count(*)) OVER () AS all_airports "
          "FROM airports WHERE tzone IS NOT NULL GROUP BY 1 ORDER BY 2 DESC",),
         lambda r: [f"Most airports are in {r[0]['tzone']} (", f(r[0]["airports"], "plain", "int"),
                    f"), then {r[1]['tzone']} (", f(r[1]["airports"], "plain", "int"), "); ",
                    f(r[0]["all_airports"], "int", "plain"), " airports in all."]),
    Case("What is the highest airport?",
         ("SELECT faa, name, alt FROM airports ORDER BY alt DESC LIMIT 2",),
         lambda r: [f"{r[0]['name']} ({r[0]['faa']}) is the highest at ",
                    f(r[0]["alt"], "int", "plain"), f" feet, ahead of {r[1]['name']} at ",
                    f(r[1]["alt"], "int", "about"), " feet."]),
    Case("How many seats were flown out of New York?",
         ("SELECT sum(p.seats) AS seats, count(*) AS flights FROM flights f "
          "JOIN planes p USING (tailnum)",),
         lambda r: ["Flights with a known plane carried up to ", f(r[0]["seats"], "m1", "m2w"),
                    " seats on ", f(r[0]["flights"], "int", "k1"), " flights."]),
    Case("When did the first flight of the year leave?",
         ("SELECT time_hour, dep_time, carrier, flight FROM flights WHERE dep_time IS NOT NULL "
          "ORDER BY year, month, day, dep_time LIMIT 1",),
         lambda r: [f"The first departure of 2013 was {r[0]['carrier']} flight {r[0]['flight']} "
                    f"at {_clock(r[0]['dep_time'] // 100, r[0]['dep_time'] % 100)} on "
                    f"{r[0]['time_hour']:%B} {r[0]['time_hour'].day}."]),
    Case("What would Hawaiian's flights earn at $0.12 a mile?",
         ("SELECT round(sum(distance) * 0.12, 2) AS revenue_usd, count(*) AS flights FROM flights "
          "WHERE carrier = 'HA'",),
         lambda r: ["At $0.12 a mile, Hawaiian's ", f(r[0]["flights"], "plain", "int"),
                    " flights would bring in ", f(r[0]["revenue_usd"], "usd", "m1"), "."]),
    Case("Summarise the three airports in a list.",
         ("SELECT origin, count(*) AS flights, round(avg(dep_delay), 1) AS avg_delay, "
          "round(100.0 * count(*) FILTER (WHERE dep_delay > 15) / count(dep_delay), 1) "
          "AS pct_late FROM flights GROUP BY 1 ORDER BY 2 DESC",),
         lambda r: ["Departures by airport:\n"] + [x for row in r.rows for x in (
             f"- **{row['origin']}**: ", f(row["flights"], "int", "k1"), " flights, a ",
             f(row["avg_delay"], "dec1", "plain"), "-minute average delay, ",
             f(row["pct_late"], "pctv1", "pctv1"), " more than 15 minutes late\n")]),
    Case("Which destinations get the most and fewest flights per day?",
         ("SELECT dest, round(count(*) / 365.0, 1) AS per_day FROM flights GROUP BY 1 "
          "ORDER BY 2 DESC",),
         lambda r: [f"{r[0]['dest']} gets ", f(r[0]["per_day"], "dec1", "plain"),
                    f" flights/day; {r[-1]['dest']} just ", f(r[-1]["per_day"], "dec1", "dec1"),
                    " (", f(r.total, "plain", "plain", alterable=False), " destinations; "
                    "a year has 365 days)."]),
    Case("How much later than scheduled did the average arrival come, by carrier?",
         ("SELECT carrier, round(avg(arr_delay), 2) AS avg_arr_delay FROM flights "
          "GROUP BY 1 ORDER BY 2",),
         lambda r: [f"Two carriers arrived early on average: {r[0]['carrier']} (",
                    f(r[0]["avg_arr_delay"], "dec2", "dec1"), f" min) and {r[1]['carrier']} (",
                    f(r[1]["avg_arr_delay"], "dec2", "dec1"), f" min). The latest, "
                    f"{r[-1]['carrier']}, averaged **", f(r[-1]["avg_arr_delay"], "dec1", "dec2"),
                    "** minutes."]),
    Case("What share of the fleet did Boeing build?",
         ("SELECT count(*) FILTER (WHERE manufacturer = 'BOEING') AS boeing, count(*) AS planes, "
          "count(*) FILTER (WHERE manufacturer = 'BOEING') / count(*) AS share FROM planes",),
         lambda r: ["Boeing built ", f(r[0]["boeing"], "int", "int"), " of the ",
                    f(r[0]["planes"], "int", "k1"), " planes, roughly ",
                    f(r[0]["share"], "pct0", "pct1"), " of the fleet (about one in two)."]),
    Case("How many flights left before 6 am?",
         ("SELECT count(*) AS early, min(dep_time) AS first_dep FROM flights "
          "WHERE dep_time < 600",),
         lambda r: [f(r[0]["early"], "int", "k1"), " flights left before 6 am; the earliest "
                    f"departure time on record is {_clock(r[0]['first_dep'] // 100, r[0]['first_dep'] % 100)}."]),
    Case("How many engines do the planes have?",
         ("SELECT engines, count(*) AS planes FROM planes GROUP BY 1 ORDER BY 2 DESC",),
         lambda r: [f"Most planes have {r[0]['engines']} engines (", f(r[0]["planes"], "int", "plain"),
                    "); ", f(r[1]["planes"], "plain", "int"), f" have {r[1]['engines']}."]),
]


def _clock(hour: int, minute: int | None = None) -> str:
    """A time of day the way people write it (19 -> "7 pm", (0, 1) -> "12:01 am")."""
    minutes = "" if minute is None else f":{minute:02d}"
    return f"{hour % 12 or 12}{minutes} {'am' if hour % 24 < 12 else 'pm'}"
