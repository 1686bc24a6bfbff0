"""The world layer: what a room is made of, as frozen data validated from files.

Catalog, personas, campaign, rules, phrasebook, the market (the catalog and campaign as
of now) and the facts a viewer can ask about. Imports only :mod:`liveroom_sim.errors`.
"""
