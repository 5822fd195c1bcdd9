"""``gpuplan gpus``, ``gpuplan offers`` and ``gpuplan catalog show|refresh``: what the catalog holds."""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

from typing import Annotated, Any, Optional

import typer

from pricing.errors import InputError
from gpuplan.cli.app import command_app
from gpuplan.cli.options import (
    CatalogOpt, CurrencyOpt, DiscountOpt, FxOpt, GpuFilterOpt, JsonOpt, MinVramOpt, OutputOpt, ProviderOpt,
    RegionOpt, SpotPriceOpt, WideOpt, build_constraints, catalog_from, emit, parse_multi, settings_from, use_wide,
)

app = command_app()  # the root loads this module when one of its commands runs (gpuplan.cli.app)
# Rows of the offers table by default: every offer of the shipped catalog (under 300), not
# the 50k of a large user catalog, which rich takes half a minute to draw.
OFFERS_SHOWN = 1000

catalog_app = typer.Typer(help="Where prices come from: show the catalog's layers, refresh live prices.",
                          no_args_is_help=True)
app.add_typer(catalog_app, name="catalog")


@app.command()
def gpus(
    output: OutputOpt = None,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """The GPU spec table: VRAM, bandwidth, FP32 and dense tensor TFLOPS, TDP, interconnect."""
    from gpuplan.render.table import Column, OutputFormat, dump_json, pick_format, render_rows

    use_wide(wide)
    fmt = pick_format(output, as_json)
    specs = sorted(catalog_from(settings_from()).gpus.values(), key=lambda g: (g.vram_gb, g.key))
    if fmt is OutputFormat.JSON:
        from pricing.notes import public_note, public_source

        # the research trail of each spec stays in gpus.csv (its source is in "source")
        emit(dump_json({"gpus": [{**g.model_dump(), "notes": public_note(g.notes), "source": public_source(g.source)}
                                 for g in specs]}))
        return
    rows = [
        {
            "key": g.key, "name": g.name, "arch": g.arch, "vram_gb": f"{g.vram_gb:g}",
            "mem_bw_gbs": g.mem_bw_gbs and f"{g.mem_bw_gbs:g}", "fp32": g.fp32_tflops and f"{g.fp32_tflops:g}",
            "tensor": g.tensor_fp16_tflops and f"{g.tensor_fp16_tflops:g}", "tdp_w": g.tdp_w and f"{g.tdp_w:g}",
            "interconnect": g.interconnect, "aliases": ", ".join(g.aliases),
        }
        for g in specs
    ]
    cols = [Column(key="key", header="GPU", priority=0), Column(key="arch", header="arch", priority=3),
            Column(key="vram_gb", header="VRAM GB", justify="right", priority=0),
            Column(key="mem_bw_gbs", header="BW GB/s", justify="right", priority=2),
            Column(key="fp32", header="FP32 TFLOPS", justify="right", priority=2),
            Column(key="tensor", header="FP16 tensor TFLOPS (dense)", justify="right", priority=1),
            Column(key="tdp_w", header="TDP W", justify="right", priority=2),
            Column(key="interconnect", header="interconnect", priority=3),
            Column(key="aliases", header="also known as", priority=4)]
    emit(render_rows(rows, cols, fmt, title="GPUs in the catalog",
                     caption="- = not in the sources; `gpuplan gpus --json` gives every source."))


@app.command()
def offers(
    provider: ProviderOpt = None,
    gpu: GpuFilterOpt = None,
    region: RegionOpt = None,
    min_vram: MinVramOpt = None,
    spot_price: SpotPriceOpt = None,
    catalog: CatalogOpt = None,
    discount: DiscountOpt = None,
    currency: CurrencyOpt = None,
    fx: FxOpt = None,
    limit: Annotated[int, typer.Option("--limit", help="Rows in the table, cheapest per GPU-hour first; 0 shows all. "
                                                        "JSON and csv list every offer.")] = OFFERS_SHOWN,
    group_by: Annotated[Optional[str], typer.Option(
        "--group-by", help="One row per gpu or provider: the cheapest per GPU-hour on demand and spot, "
        "and where.")] = None,
    output: OutputOpt = None,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Instances and cards with price per instance-hour, per GPU-hour and per GB-of-VRAM-hour.

    -o csv writes the catalog's own columns in each offer's native currency: edit it and
    feed it back with --catalog FILE.
    """
    from pricing.catalog import paused_gc
    from pricing.catalog.parse import instances_csv_chunks
    from gpuplan.render.offers import render_offers
    from planner.plan.offers import catalog_rows, offer_rows, offers_payload
    from gpuplan.render.table import OutputFormat, dump_json, pick_format

    from planner.limits import bounded

    fmt = pick_format(output, as_json)
    use_wide(wide)
    bounded(limit, "limit")
    s = settings_from(currency, fx, discount=discount, spot_price=spot_price)
    with paused_gc(freeze=True):  # the command ends after this block (see pricing.catalog.parse)
        cat = catalog_from(s, catalog)
        c = build_constraints(deadline=None, budget=None, min_vram=min_vram, provider=provider, billing=None,
                              region=region, gpu=gpu, max_gpus=None, settings=s, catalog=cat)
        if group_by is not None:
            from gpuplan.render.offers import render_groups
            from planner.plan.offers import group_offers

            by = group_by.strip().lower()
            groups = group_offers(offer_rows(cat, c, s), by)
            emit(dump_json({"currency": s.currency, "group_by": by, "groups": groups})
                 if fmt is OutputFormat.JSON else render_groups(groups, by, fmt, s))
            return
        if fmt is OutputFormat.CSV:  # the catalog's rows, written as they are read: no table of offers built
            from pricing.notes import public_note

            # a row's research trail (how a figure was checked) stays in the shipped files, not in what is printed
            emit(instances_csv_chunks(r._replace(notes=public_note(r.notes)) if r.notes else r
                                      for r in catalog_rows(cat, c, s)))
            return
        items = offer_rows(cat, c, s)
        if fmt is OutputFormat.JSON:
            emit(dump_json(offers_payload(items, s)))
        else:
            emit(render_offers(items, fmt, s, limit=limit))


@catalog_app.command("show")
def catalog_show(
    catalog: CatalogOpt = None,
    discount: DiscountOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The layers the catalog is built from (shipped snapshot, refreshed cache, your files), with rows and dates."""
    from gpuplan.render.table import dump_json
    from gpuplan.paths import catalog_cache_dir

    from pathlib import Path

    from providers.refresh import cache_origin

    cat = catalog_from(settings_from(discount=discount), catalog)
    layers = [layer.model_dump(mode="json") for layer in cat.layers]
    for layer in layers:
        if layer["layer"] == "cache":
            meta = cache_origin(Path(layer["origin"]))
            layer["endpoint"], layer["refreshed_at"] = meta.get("endpoint"), meta.get("refreshed_at")
            # the provider is the cache file's folder: <cache>/<provider>/<region>.csv
            layer["note"] = (f"read through {layer['endpoint']}, not the cloud's API: `gpuplan catalog clear "
                             f"--provider {Path(layer['origin']).parent.name}` removes it" if layer["endpoint"] else
                             "" if meta else "where it was read is not recorded (refreshed by an older gpuplan)")
    if as_json:
        emit(dump_json({"cache_dir": str(catalog_cache_dir()), "layers": layers,
                        "live_providers": sorted(cat.live_providers), "rows": len(cat.instances)}))
        return
    from gpuplan.render.table import Column, OutputFormat, render_rows

    cols = [Column(key="layer", header="layer", priority=0), Column(key="origin", header="from", droppable=False),
            Column(key="rows", header="rows", justify="right", priority=0),
            Column(key="as_of", header="as of", priority=0)]
    if any(layer.get("note") for layer in layers):
        cols.append(Column(key="note", header="note", droppable=False))
    emit(render_rows(layers, cols, OutputFormat.TABLE, title="Catalog layers (later ones override earlier ones)",
                     caption=f"refreshed prices live under {catalog_cache_dir()}; `gpuplan catalog clear` "
                             "removes them"))


@catalog_app.command("clear")
def catalog_clear(
    provider: Annotated[Optional[str], typer.Option("--provider", help="Only this cloud's refreshed prices.")] = None,
    region: Annotated[Optional[list[str]], typer.Option("--region", help="Only these regions (repeatable).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Remove refreshed prices from the user cache; plans use the shipped snapshot (and your files) again."""
    from gpuplan.console import stderr
    from gpuplan.paths import catalog_cache_dir
    from gpuplan.render.table import dump_json
    from providers.refresh import clear

    name = provider.strip().lower() if provider is not None else None
    if name == "":
        raise InputError("--provider is empty", "name a cloud, e.g. --provider tencent, or leave the flag out")
    if name is not None:
        from providers.registry import parse_provider

        name = parse_provider(name, catalog_from(settings_from()))  # a misspelt cloud is an error, not "nothing"
    regions = tuple(dict.fromkeys(parse_multi(region, "--region") or ()))
    removed = clear(catalog_cache_dir(), name, regions)
    if as_json:
        emit(dump_json({"removed": [str(p) for p in removed]}))
        return
    for p in removed:
        stderr().print(f"removed {p}", highlight=False, markup=False)
    if not removed:
        what = " ".join(x for x in (name, ", ".join(regions)) if x) or "any provider"
        stderr().print(f"no refreshed prices for {what} under {catalog_cache_dir()}", highlight=False,
                       markup=False)


@catalog_app.command("refresh")
def catalog_refresh(
    provider: Annotated[Optional[str], typer.Option("--provider", help=(
        "Cloud whose live prices to read: tencent or aws; with --source gpuhunt, any of its catalogs "
        "(gcp, azure, lambda, oci, nebius, runpod, ...; comma list)."))] = None,
    region: Annotated[Optional[list[str]], typer.Option(
        "--region", help="Region to read, e.g. ap-guangzhou, us-east-1 (repeatable; with --source gpuhunt: only these, "
        "default all).")] = None,
    profile: Annotated[Optional[str], typer.Option("--profile", help="AWS profile name (AWS only).")] = None,
    source: Annotated[str, typer.Option(
        "--source", help="cloud: the cloud's own price API; gpuhunt: gpuhunt's catalogs (needs gpuplan[market]; "
        "GPUHUNT_CATALOG_URL points it elsewhere).")] = "cloud",
    fx: Annotated[bool, typer.Option("--fx", help=(
        "Read ECB's euro reference exchange rates of the day (free, no key; GPUPLAN_ECB_URL points it elsewhere) "
        "into the cache; plans prefer them to the shipped rates."))] = False,
    as_json: JsonOpt = False,
) -> None:
    """Read live prices (and stock where the API gives it) into the user cache; plan and offers then use them."""
    if fx:
        if provider is not None and as_json:
            raise InputError("--fx and --provider with --json would print two answers", "run them one at a time")
        _refresh_fx(as_json)
        if provider is None:
            return
    if provider is None:
        raise InputError("--provider is needed to read prices", "e.g. --provider aws --region us-east-1, or --fx "
                         "for exchange rates only")
    from gpuplan.console import stderr
    from gpuplan.paths import catalog_cache_dir
    from gpuplan.render.table import dump_json
    from providers.refresh import refresh
    from providers.registry import parse_provider

    s = settings_from()
    cat = catalog_from(s)
    wanted = source.strip().lower()
    if wanted == "gpuhunt":
        _refresh_market(provider, region, cat, as_json)
        return
    if wanted != "cloud":
        raise InputError(f"unknown --source {source!r}", "use cloud or gpuhunt")
    if not region:
        raise InputError("--region is needed to read a cloud's own prices", "e.g. --region us-east-1")
    name = parse_provider(provider, cat)
    options = {"profile": profile} if profile else {}
    results = []
    for r in dict.fromkeys(parse_multi(region, "--region") or ()):
        res = refresh(name, r, cat, cache=catalog_cache_dir(), endpoint=_endpoint_override(name), **options)
        results.append(res)
        if not as_json:
            stderr().print(
                f"{res.provider} {res.region}: {res.rows} offers of {res.instance_types} GPU instance types"
                f" in {len(res.zones)} zone(s), {res.sold_out} sold out; as of {res.as_of}; saved to {res.path}",
                highlight=False, markup=False)
            for d in res.dropped:  # out of bounds: kept out of every plan, and said
                stderr().print(f"warning: {res.provider} {res.region}: left out {d}", highlight=False, markup=False)
            if res.endpoint:
                stderr().print(f"note: read through {res.endpoint}, not {res.provider}'s own API; plans use these "
                               f"prices until `gpuplan catalog clear --provider {res.provider}`",
                               highlight=False, markup=False)
    if as_json:
        emit(dump_json({"refreshed": [r.model_dump(mode="json") for r in results]}))


def _refresh_fx(as_json: bool) -> None:
    """``catalog refresh --fx``: ECB's reference rates into the cache."""
    import os

    from gpuplan.console import stderr
    from gpuplan.paths import fx_cache_file
    from gpuplan.render.table import dump_json
    from providers.fx_feed import ECB_DAILY_URL, refresh_fx

    url = os.environ.get("GPUPLAN_ECB_URL", "").strip() or ECB_DAILY_URL
    rates = refresh_fx(fx_cache_file(), url)
    if as_json:
        emit(dump_json({"fx": [r.label() for r in rates], "path": str(fx_cache_file())}))
        return
    day = rates[0].as_of
    stderr().print(f"ECB reference rates of {day}: {', '.join(f'1 EUR = {r.rate} {r.quote}' for r in rates)}; "
                   f"saved to {fx_cache_file()}", highlight=False, markup=False)


def _refresh_market(provider: str, region: list[str] | None, cat: Any, as_json: bool) -> None:
    """``catalog refresh --source gpuhunt``."""
    import os

    from gpuplan.console import stderr
    from gpuplan.paths import catalog_cache_dir
    from gpuplan.render.table import dump_json
    from pricing.text import without_url_credentials
    from providers.refresh import refresh_market

    names = parse_multi([provider], "--provider") or []
    url = os.environ.get("GPUHUNT_CATALOG_URL", "").strip()
    endpoint = f"GPUHUNT_CATALOG_URL={without_url_credentials(url.rstrip('/'))}" if url else None
    results, market = refresh_market(names, cat, cache=catalog_cache_dir(),
                                     regions=tuple(parse_multi(region, "--region") or ()), endpoint=endpoint)
    unknown = market.unknown_gpus
    if as_json:
        emit(dump_json({"refreshed": [r.model_dump(mode="json") for r in results],
                        "unknown_gpus": {k: sorted(v) for k, v in unknown.items()},
                        "left_out": market.left_out}))
        return
    by_provider: dict[str, list[Any]] = {}
    for r in results:
        by_provider.setdefault(r.provider, []).append(r)
    for p, rs in by_provider.items():
        stderr().print(f"{p}: {sum(r.rows for r in rs)} GPU offers in {len(rs)} region(s) from gpuhunt; saved under "
                       f"{rs[0].path.parent}", highlight=False, markup=False)
    for p, names_ in unknown.items():
        stderr().print(f"{p}: skipped GPUs the catalog does not know (gpuhunt's names): "
                       f"{', '.join(sorted(names_))}",
                       highlight=False, markup=False)
    for p, reasons in market.left_out.items():
        for why, n in sorted(reasons.items()):
            stderr().print(f"{p}: {n} item(s) {why}", highlight=False, markup=False)
    if endpoint:
        stderr().print(f"note: read through {endpoint}; plans use these prices until `gpuplan catalog clear`",
                       highlight=False, markup=False)


def _endpoint_override(provider: str) -> str | None:
    """``VAR=url`` when the environment sends ``provider``'s API calls elsewhere than the cloud (a fake, a proxy;
    credentials in the URL masked), else None."""
    import os

    from pricing.text import without_url_credentials
    from providers.registry import CLOUDS

    cloud = CLOUDS.get(provider)
    for var in cloud.endpoint_envs if cloud else ():
        if url := os.environ.get(var, "").strip():
            return f"{var}={without_url_credentials(url.rstrip('/'))}"
    return None
