(function(){
"use strict";
function fmt(s){if(s<0)return"-"+fmt(-s);if(s===0)return"0s";if(s<1){var ms=s*1000;return(ms<10?ms.toPrecision(3)*1:Math.round(ms))+"ms";}
if(s<60)return(s<10&&s!==Math.floor(s)?(s.toPrecision(3)*1):Math.round(s))+"s";var t=Math.round(s),h=Math.floor(t/3600),m=Math.floor(t%3600/60),x=t%60;
function p(n){return(n<10?"0":"")+n;}if(h)return h+"h"+p(m)+"m"+(x?p(x)+"s":"");return m+"m"+(x?p(x)+"s":"");}
var tip=document.createElement("div");tip.id="tip";document.body.appendChild(tip);
function show(e,lines){tip.textContent="";lines.forEach(function(l){var d=document.createElement("div");d.textContent=l;tip.appendChild(d);});
tip.style.display="block";var x=e.pageX+14,w=tip.offsetWidth;if(x+w>window.scrollX+document.documentElement.clientWidth)x=e.pageX-w-14;
tip.style.left=x+"px";tip.style.top=(e.pageY+14)+"px";}
function hide(){tip.style.display="none";}
function data(id){var el=document.getElementById("data-"+id);return el?JSON.parse(el.textContent):null;}
function near(ts,t){var lo=0,hi=ts.length-1;if(hi<0)return-1;while(lo<hi){var mid=(lo+hi+1)>>1;if(ts[mid]<=t)lo=mid;else hi=mid-1;}return lo;}
function svgX(svg,e){var p=svg.createSVGPoint();p.x=e.clientX;p.y=e.clientY;return p.matrixTransform(svg.getScreenCTM().inverse()).x;}
document.querySelectorAll("rect.hover[data-chart]").forEach(function(r){
 var d=data(r.getAttribute("data-chart"));if(!d)return;var svg=r.ownerSVGElement;
 var cross=document.createElementNS("http://www.w3.org/2000/svg","line");cross.setAttribute("class","cross");
 cross.setAttribute("y1",r.getAttribute("y"));cross.setAttribute("y2",+r.getAttribute("y")+(+r.getAttribute("height")));cross.style.display="none";svg.appendChild(cross);
 r.addEventListener("mousemove",function(e){var x=svgX(svg,e),t=d.x0+(x-d.left)/d.w*(d.x1-d.x0);cross.setAttribute("x1",x);cross.setAttribute("x2",x);cross.style.display="";
  var lines=[fmt(t)+" simulated"];d.series.forEach(function(s){var i=near(d.ts[s.ti],t);if(i>=0)lines.push(s.name+": "+(d.pct?(+s.v[i]).toFixed(1)+"%":(+s.v[i]).toLocaleString()));});show(e,lines);});
 r.addEventListener("mouseleave",function(){cross.style.display="none";hide();});
});
document.addEventListener("mousemove",function(e){var el=e.target&&e.target.closest?e.target.closest("[data-tip]"):null;
 if(el)show(e,el.getAttribute("data-tip").split("\n"));else if(!(e.target.closest&&e.target.closest("[data-chart],canvas.heat")))hide();});
var STOPS=[[0,[255,255,229]],[.25,[254,217,118]],[.5,[253,141,60]],[.75,[227,26,28]],[1,[128,0,38]]];
function ramp(v){var f=Math.min(v,200)/200;for(var i=1;i<STOPS.length;i++){if(f<=STOPS[i][0]){var a=STOPS[i-1],b=STOPS[i],u=(f-a[0])/(b[0]-a[0]);
 return[0,1,2].map(function(k){return Math.round(a[1][k]+(b[1][k]-a[1][k])*u);});}}return STOPS[STOPS.length-1][1];}
function bytes(b64){var s=atob(b64),out=new Uint8Array(s.length);for(var i=0;i<s.length;i++)out[i]=s.charCodeAt(i);return out;}
function Heat(canvas){
 var d=data(canvas.id),n=d.names.length,k=d.edges.length-1,self=this;
 var rowH=n<=10?22:n<=40?14:Math.max(1,Math.min(14,640/n)),left=rowH>=9?120:12,top=6,w=canvas.width-left-16,h=Math.max(1,Math.round(n*rowH));
 canvas.height=top+h+34;var x0=d.edges[0],x1=d.edges[k]||1;
 function xAt(t){return left+(t-x0)/((x1-x0)||1)*w;}
 var cache={};function rows(res){if(!cache[res])cache[res]=d.rows[res].map(bytes);return cache[res];}
 this.draw=function(res){self.res=res;var ctx=canvas.getContext("2d"),R=rows(res),order=d.order[res];ctx.fillStyle="#fff";ctx.fillRect(0,0,canvas.width,canvas.height);
  var off=document.createElement("canvas");off.width=Math.max(k,1);off.height=Math.max(n,1);var octx=off.getContext("2d"),img=octx.createImageData(off.width,off.height);
  order.forEach(function(node,r){var row=R[node];for(var c=0;c<k;c++){var v=row[c],p=(r*off.width+c)*4,rgb=v===255?[229,231,235]:ramp(v);
   img.data[p]=rgb[0];img.data[p+1]=rgb[1];img.data[p+2]=rgb[2];img.data[p+3]=255;}});
  octx.putImageData(img,0,0);ctx.imageSmoothingEnabled=false;ctx.drawImage(off,left,top,w,h);
  var hatch=document.createElement("canvas");hatch.width=6;hatch.height=6;var hc=hatch.getContext("2d");hc.fillStyle="#111827";hc.fillRect(0,0,6,6);
  hc.strokeStyle="#6b7280";hc.lineWidth=1.2;hc.beginPath();hc.moveTo(0,6);hc.lineTo(6,0);hc.stroke();var pat=ctx.createPattern(hatch,"repeat");
  order.forEach(function(node,r){(d.notReady[node]||[]).forEach(function(iv){var a=xAt(Math.max(iv[0],x0)),b=xAt(Math.min(iv[1],x1));
   ctx.fillStyle=pat;ctx.globalAlpha=.88;ctx.fillRect(a,top+r*rowH,Math.max(b-a,1),Math.max(rowH,1));ctx.globalAlpha=1;});});
  ctx.fillStyle="#374151";ctx.font="11px system-ui,sans-serif";ctx.textAlign="right";ctx.textBaseline="middle";
  if(left>12)order.forEach(function(node,r){var name=d.names[node];if(name.length>17)name=name.slice(0,16)+"\u2026";ctx.fillText(name,left-6,top+r*rowH+rowH/2);});
  ctx.strokeStyle="#9ca3af";ctx.beginPath();ctx.moveTo(left,top+h+.5);ctx.lineTo(left+w,top+h+.5);ctx.stroke();ctx.textAlign="center";ctx.textBaseline="top";
  d.ticks.forEach(function(tk){var x=Math.round(xAt(tk[0]))+.5;ctx.beginPath();ctx.moveTo(x,top+h);ctx.lineTo(x,top+h+4);ctx.stroke();ctx.fillText(tk[1],x,top+h+7);});
  ctx.textAlign="right";ctx.fillStyle="#6b7280";ctx.font="italic 11px system-ui,sans-serif";ctx.fillText("simulated time",left+w,top+h+21);
  ctx.textAlign="left";ctx.fillText(n+" nodes, sorted by mean allocation (highest first)",left,top+h+21);};
 canvas.addEventListener("mousemove",function(e){var b=canvas.getBoundingClientRect(),sx=canvas.width/b.width,x=(e.clientX-b.left)*sx,y=(e.clientY-b.top)*(canvas.height/b.height);
  var r=Math.floor((y-top)/rowH),c=Math.floor((x-left)/w*k);if(r<0||r>=n||c<0||c>=k){hide();return;}
  var node=d.order[self.res][r],v=rows(self.res)[node][c],lines=[d.names[node],fmt(d.edges[c])+" \u2013 "+fmt(d.edges[c+1])];
  lines.push(v===255?"node absent":self.res+": "+(v/2).toFixed(1)+"% allocated");if(d.pods){var np=bytes(d.pods[node])[c];lines.push("pods at bucket end: "+(np===255?"255+":np));}
  (d.notReady[node]||[]).forEach(function(iv){if(iv[0]<d.edges[c+1]&&iv[1]>d.edges[c])lines.push("not Ready "+fmt(iv[0])+" \u2013 "+fmt(iv[1]));});show(e,lines);});
 canvas.addEventListener("mouseleave",hide);
 this.draw(d.resources[0]);
}
var heats={};document.querySelectorAll("canvas.heat").forEach(function(c){heats[c.id]=new Heat(c);});
document.querySelectorAll("button.res").forEach(function(b){b.addEventListener("click",function(){var id=b.getAttribute("data-heat");
 document.querySelectorAll('button.res[data-heat="'+id+'"]').forEach(function(o){o.classList.toggle("on",o===b);});heats[id].draw(b.getAttribute("data-res"));});});
})();
