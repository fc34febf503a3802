/**
 * Build-time only: the script that starts Swagger UI on `/reference`, written into the docs
 * bundle as `reference-init.js`. It is a file of its own because the page's Content-Security-Policy
 * runs no inline script. Plain browser JavaScript: the bundle serves it as is.
 *
 * Besides the settings, it mends what an axe-core scan finds in Swagger UI's markup that no
 * setting reaches (the colours are in `reference-theme.css`):
 * - an operation's path is a deep link inside the summary button, a link in a button
 *   (nested-interactive): it is rendered as text, since expanding the operation already puts
 *   the same deep link in the address bar;
 * - some controls have no accessible name (select-name, label, button-name): the server and
 *   response-example selects, the request body editor of "Try it out" and the authorization
 *   dialog's close button get the name of the caption Swagger UI shows beside them;
 * - the dialog's Authorize and Logout buttons carry an aria-label other than their text
 *   (label-content-name-mismatch): the text becomes their name;
 * - a code example wider than the screen scrolls, but a keyboard cannot reach it
 *   (scrollable-region-focusable): code examples take focus.
 * Swagger UI renders after this script runs and again as sections open, so a MutationObserver
 * applies the last three to each new node; React leaves attributes it did not set alone.
 */
export const REFERENCE_INIT_JS = `'use strict';
(() => {
  /** Renders an operation's path without the link that would nest inside the summary button. */
  const pathAsText = (system) => {
    const React = system.React;
    const Text = (props) => React.createElement('span', null, props.text);
    return {
      wrapComponents: {
        OperationSummaryPath: (Original) => (props) =>
          React.createElement(Original, {
            ...props,
            getComponent: (name, ...rest) => (name === 'DeepLink' ? Text : props.getComponent(name, ...rest)),
          }),
      },
    };
  };

  window.ui = SwaggerUIBundle({
    url: new URL('openapi.json', window.location.href.replace(/\\/reference\\/?(#.*)?$/, '/')).href,
    dom_id: '#reference',
    plugins: [pathAsText],
    deepLinking: true,
    persistAuthorization: false,
    tryItOutEnabled: false,
    // A theme whose every JSON token reads at 4.5:1 or more on its background (the default, agate, does not).
    syntaxHighlight: { activated: true, theme: 'obsidian' },
    // Nothing leaves this host: no online validator badge.
    validatorUrl: null,
  });

  /** Controls Swagger UI renders without a name, and the caption it shows beside each. */
  const NAMES = [
    ['select#servers', 'Servers'],
    ['select.examples-select-element', 'Examples'],
    ['textarea.body-param__text', 'Request body'],
    ['button.close-modal', 'Close'],
  ];
  const root = document.getElementById('reference');
  const mend = () => {
    for (const [selector, name] of NAMES) {
      for (const control of root.querySelectorAll(selector + ':not([aria-label])')) control.setAttribute('aria-label', name);
    }
    for (const button of root.querySelectorAll('.auth-btn-wrapper button[aria-label]')) button.removeAttribute('aria-label');
    for (const code of root.querySelectorAll('pre.microlight:not([tabindex])')) code.tabIndex = 0;
  };
  new MutationObserver(mend).observe(root, { childList: true, subtree: true });
  mend();
})();
`;
