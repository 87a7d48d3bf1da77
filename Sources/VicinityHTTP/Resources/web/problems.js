// How a failure reads on the page: the problem's detail, and each field's message under the name the page's
// own label gives the field ("First name must not be empty", never "first_name: must not be empty").

// `wordsFor(field)` names a field as its form does; by default, as the label of the shown control of that name.
export function problemLines(error, wordsFor = shownFieldWords) {
  const problem = error?.problem;
  if (!problem) return { detail: `Something went wrong: ${error?.message ?? error}`, fields: [] };
  const fields = Array.isArray(problem.errors)
    ? problem.errors.map((item) => `${wordsFor(item.field)} ${item.message}`)
    : [];
  return { detail: problem.detail ?? 'The request failed.', fields };
}

// What the label of `control` calls it, without the hint after it that says what to type
// ("Password (at least 8 characters)" is "Password", "Options, one per line" is "Options"); null for a control
// without a label.
export function labelWords(control) {
  const label = control?.labels?.[0];
  const text = label?.textContent.replace(/\s+/g, ' ').trim();
  if (!text) return null;
  return text.split(/\s*[(:,]/)[0] || text;
}

// The label of the shown control named `field`, else the name itself in words ("first_name" as "First name").
export function shownFieldWords(field) {
  const shown = [...document.getElementsByName(field)].find((node) => node.getClientRects().length > 0);
  return labelWords(shown) ?? spelledOut(field);
}

function spelledOut(field) {
  const words = String(field).replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
