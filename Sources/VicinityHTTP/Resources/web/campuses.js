// Campus boundaries, drawn once under everything else, each named at its northern edge (at its centre the
// name would cover the buildings).
import { get } from './api.js';
import { el } from './dom.js';
import { layerGroup, mapReady } from './map.js';
import { showError } from './messages.js';

export async function drawCampuses() {
  if (!mapReady()) return;
  try {
    const collection = await get('/v1/campuses');
    if (!collection.features?.length) return;
    const group = layerGroup('campuses');
    const boundaries = L.geoJSON(collection, {
      interactive: false,
      style: () => ({ className: 'campus' }),
      onEachFeature: (feature, layer) => {
        const name = feature.properties?.name;
        if (!name) return;
        const bounds = layer.getBounds();
        group.addLayer(L.tooltip({ permanent: true, direction: 'top', className: 'campus-label', interactive: false })
          .setLatLng([bounds.getNorth(), bounds.getCenter().lng])
          .setContent(el('span', { text: name })));
      },
    });
    group.addLayer(boundaries);
    boundaries.bringToBack();
  } catch (error) {
    showError(error);
  }
}
